"""Ray Train's surface for flexq pods: report, ScalingConfig, JaxTrainer.

See the package docstring for the roles. The files this module reads and
writes, all under the pod directories flexqd's runner keeps
(<FLEXQ_DATA_DIR>/pods/<namespace>/<pod>/):

    pod.json       the Pod as started (labels tell a worker of cluster C)
    log            the pod's stdout+stderr
    metrics.jsonl  one JSON object per line, appended by the helper:
                     {"event": "start", "rank", "pid", "ip", "log_offset"}
                     {"event": "report", "rank", "metrics", "time"}
                     {"event": "done" | "error", "rank", "log_offset", ...}
    status.json    written by the runner when the process ends, with
                   "logComplete": whether the log pump has written the
                   pod's last bytes (written again, true, once it has)

How the driver follows a worker's log. Under flexqd's runner a pod's
stdout is a pipe to the log pump, not the log file, so a worker cannot
tell where in the log it is: its log_offset is null (a pipe's size is 0;
an offset of 0 once made the driver read nothing after "done", and a
driver paused, or started late, lost every line it had not read yet).
The driver reads a worker's log from its start, keeps the file open so a
rotation (log -> log.1, a new log) does not lose its place, and after the
worker's "done" or "error" reads on until the pod has ended and its log
is whole (status.json, logComplete not false), then to the end. Only where stdout is a regular file does log_offset say
where the worker's part begins and ends. A pod that has not ended
FLEXQ_LOG_DRAIN_S (default 60) seconds after its "done" (or whose log is
not whole by then) is read as far as it got, and the driver says so in its
output rather than stopping quietly.

Only the standard library is used, so any Python 3.8+ runs it.
"""

import json
import os
import stat
import sys
import time
import traceback

__all__ = ["report", "ScalingConfig", "JaxTrainer", "DataParallelTrainer",
           "Result", "TrainingFailedError", "get_context"]

_WORKER_WAIT_S = float(os.environ.get("FLEXQ_TRAIN_TIMEOUT_S", "3600"))
_DEDUP_WINDOW_S = float(os.environ.get("RAY_DEDUP_LOGS_AGG_WINDOW_S", "5"))
_LOG_DRAIN_S = float(os.environ.get("FLEXQ_LOG_DRAIN_S", "60"))


class TrainingFailedError(RuntimeError):
    """A worker failed; the message names it and its last error."""


class ScalingConfig:
    """Ray Train's ScalingConfig, kept as given (flexq's pods are sized by
    the RayJob manifest, not by this object)."""

    def __init__(self, num_workers=1, use_gpu=False, resources_per_worker=None,
                 use_tpu=False, topology=None, accelerator_type=None,
                 placement_strategy="PACK", trainer_resources=None):
        self.num_workers = int(num_workers)
        self.use_gpu = use_gpu
        self.use_tpu = use_tpu
        self.resources_per_worker = dict(resources_per_worker or {})
        self.topology = topology
        self.accelerator_type = accelerator_type
        self.placement_strategy = placement_strategy
        self.trainer_resources = trainer_resources

    def __repr__(self):
        return ("ScalingConfig(num_workers=%d, use_tpu=%r, topology=%r, "
                "accelerator_type=%r, resources_per_worker=%r)" %
                (self.num_workers, self.use_tpu, self.topology,
                 self.accelerator_type, self.resources_per_worker))


class Result:
    """What fit() returns: the last metrics rank 0 reported."""

    def __init__(self, metrics=None, error=None, path=None, history=None):
        self.metrics = metrics
        self.error = error
        self.path = path
        self.checkpoint = None
        self.best_checkpoints = []
        self.metrics_history = history or []

    def __repr__(self):
        return "Result(metrics=%r, path=%r, error=%r)" % (
            self.metrics, self.path, self.error)


class _Context:
    def __init__(self, rank=0, world=1, local_rank=0):
        self.rank, self.world, self.local_rank = rank, world, local_rank

    def get_world_rank(self):
        return self.rank

    def get_world_size(self):
        return self.world

    def get_local_rank(self):
        return self.local_rank

    def get_local_world_size(self):
        return 1

    def get_node_rank(self):
        return self.rank


_ctx = _Context()
_last = {"metrics": None, "history": []}


def get_context():
    """The calling worker's rank and world size (Ray's TrainContext)."""
    return _ctx


def _env_int(*names, default=0):
    for n in names:
        v = os.environ.get(n)
        if v not in (None, ""):
            try:
                return int(v)
            except ValueError:
                pass
    return default


def role():
    """'worker', 'driver' or 'local' (no flexq cluster around)."""
    r = os.environ.get("FLEXQ_RAY_ROLE") or os.environ.get("FLEXQ_ROLE")
    if r == "worker":
        return "worker"
    if r in ("driver", "head", "submitter"):
        return "driver"
    if not r and os.environ.get("RANK") not in (None, "") and \
            os.environ.get("FLEXQ_POD_NAME"):
        return "worker"  # an Indexed Job's pod: SPMD without Ray labels
    if _cluster_name() and os.environ.get("FLEXQ_DATA_DIR"):
        return "driver"
    return "local"


def _append_event(ev):
    path = os.environ.get("FLEXQ_METRICS_FILE")
    if not path:
        return
    ev.setdefault("time", time.time())
    line = json.dumps(ev, default=_jsonable) + "\n"
    # one write() per line on an O_APPEND file: lines never interleave
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def _jsonable(x):
    for attr in ("item", "tolist"):
        if hasattr(x, attr):
            try:
                return getattr(x, attr)()
            except Exception:
                pass
    return str(x)


def _plain(metrics):
    return json.loads(json.dumps(metrics, default=_jsonable))


def report(metrics, checkpoint=None, checkpoint_dir_name=None):
    """Records one round of metrics (Ray's train.report). Every worker
    should call it the same number of times; rank 0's metrics are the run's
    result."""
    m = _plain(dict(metrics))
    _last["metrics"] = m
    _last["history"].append(m)
    _append_event({"event": "report", "rank": _ctx.rank, "metrics": m})


def _log_offset():
    """Where the worker's output has reached in its log, or None when that
    cannot be known: only a regular file's size says it. Under flexqd's
    runner stdout is a pipe to the log pump, whose size is 0 whatever was
    written (and the pump may not have copied the last bytes yet)."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        st = os.fstat(1)
    except (OSError, ValueError):
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def _call_loop(fn, config):
    if config is None:
        try:
            return fn()
        except TypeError as e:
            if "positional argument" not in str(e):
                raise
            return fn({})
    return fn(config)


class DataParallelTrainer:
    """fit() runs train_loop_per_worker on each worker (SPMD)."""

    _name = "RayTrainWorker"  # Ray's actor name, as the tutorial shows it

    def __init__(self, train_loop_per_worker, train_loop_config=None,
                 scaling_config=None, run_config=None, **_ignored):
        self.train_loop_per_worker = train_loop_per_worker
        self.train_loop_config = train_loop_config
        self.scaling_config = scaling_config or ScalingConfig()
        self.run_config = run_config

    def fit(self):
        r = role()
        if r == "worker":
            self._fit_worker()  # does not return
        if r == "driver":
            return self._fit_driver()
        return self._fit_local()

    # --- worker -----------------------------------------------------------
    def _fit_worker(self):
        global _ctx
        rank = _env_int("RANK", "JAX_PROCESS_ID", "TPU_WORKER_ID")
        world = _env_int("WORLD_SIZE", "JAX_NUM_PROCESSES",
                         default=self.scaling_config.num_workers)
        _ctx = _Context(rank, world, _env_int("LOCAL_RANK"))
        _append_event({"event": "start", "rank": rank, "world": world,
                       "pid": os.getpid(),
                       "ip": os.environ.get("FLEXQ_POD_IP", "127.0.0.1"),
                       "log_offset": _log_offset()})
        code = 0
        try:
            _call_loop(self.train_loop_per_worker, self.train_loop_config)
            _append_event({"event": "done", "rank": rank,
                           "metrics": _last["metrics"],
                           "log_offset": _log_offset()})
        except BaseException as e:  # noqa: B902 - report every way out
            traceback.print_exc()
            _append_event({"event": "error", "rank": rank,
                           "error": "%s: %s" % (type(e).__name__, e),
                           "log_offset": _log_offset()})
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        # The rest of the script (the driver's part) is not the worker's.
        os._exit(code)

    # --- local (no cluster) ----------------------------------------------
    def _fit_local(self):
        global _ctx
        _ctx = _Context(0, 1, 0)
        try:
            _call_loop(self.train_loop_per_worker, self.train_loop_config)
        except Exception as e:
            raise TrainingFailedError("the training loop failed: %s" % e)
        return Result(metrics=_last["metrics"], history=_last["history"])

    # --- driver -----------------------------------------------------------
    def _fit_driver(self):
        cluster = _cluster_name()
        ns = os.environ.get("FLEXQ_POD_NAMESPACE", "default")
        root = os.path.join(os.environ["FLEXQ_DATA_DIR"], "pods", ns)
        fwd = _Forwarder(self._name)
        deadline = time.time() + _WORKER_WAIT_S
        workers = {}
        while True:
            for pod in _worker_pods(root, cluster):
                if pod not in workers:
                    workers[pod] = _Worker(os.path.join(root, pod))
            fwd.world = len(workers)
            for w in workers.values():
                w.poll(fwd)
            fwd.flush_expired()
            expected = max(len(workers), 1)
            finished = [w for w in workers.values() if w.finished]
            if workers and len(finished) >= expected:
                break
            if time.time() > deadline:
                raise TrainingFailedError(
                    "timed out after %.0f s waiting for the workers of "
                    "cluster %s" % (_WORKER_WAIT_S, cluster))
            time.sleep(0.1)
        for w in workers.values():
            w.poll(fwd)
        fwd.flush_all()
        failed = [w for w in workers.values() if w.error]
        rank0 = min(workers.values(), key=lambda w: (w.rank is None, w.rank))
        res = Result(metrics=rank0.metrics, history=rank0.history,
                     path=os.environ.get("FLEXQ_POD_DIR"),
                     error=failed[0].error if failed else None)
        _append_event({"event": "result", "metrics": res.metrics,
                       "workers": len(workers)})
        if failed:
            raise TrainingFailedError(
                "worker %s (rank %s) failed: %s" %
                (failed[0].pod, failed[0].rank, failed[0].error))
        return res


class JaxTrainer(DataParallelTrainer):
    """Ray Train's JaxTrainer: SPMD over the TPU hosts of a slice. flexq
    leaves jax.distributed.initialize to JAX itself, which reads
    JAX_COORDINATOR_ADDRESS / TPU_WORKER_* from the pod's env."""



TorchTrainer = DataParallelTrainer


def _cluster_name():
    c = os.environ.get("FLEXQ_RAY_CLUSTER")
    if c:
        return c
    dash = os.environ.get("RAY_DASHBOARD_ADDRESS", "")
    host = dash.split("://")[-1].split(":")[0].split(".")[0]
    if host.endswith("-head-svc"):
        return host[:-len("-head-svc")]
    return None


def _worker_pods(root, cluster):
    listed = os.environ.get("FLEXQ_WORKER_PODS")
    if listed:  # the RayJob controller's list, in RANK order
        return [n for n in listed.split(",")
                if os.path.exists(os.path.join(root, n, "pod.json"))]
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    out = []
    for n in names:
        try:
            with open(os.path.join(root, n, "pod.json")) as f:
                labels = json.load(f).get("metadata", {}).get("labels", {})
        except (OSError, ValueError):
            continue
        if labels.get("ray.io/cluster") == cluster and \
                labels.get("ray.io/node-type") == "worker":
            out.append(n)
    return out


class _Worker:
    """One worker pod as the driver follows it (the module's docstring says
    how): its events in metrics.jsonl, its output in its log."""

    _MAX_TURNS = 8  # rotations followed in one poll

    def __init__(self, d):
        self.dir, self.pod = d, os.path.basename(d)
        self.moff = 0
        self.started = False  # "start" read: its output is forwarded
        self.log = None  # the log file, open once started
        self.loff = 0  # where the next read in self.log begins
        self.lend = None  # where its part ends (stdout a regular file)
        self.said_end = None  # when "done" or "error" was read
        self.buf = b""
        self.rank = None
        self.pid = "?"
        self.ip = "127.0.0.1"
        self.metrics = None
        self.history = []
        self.error = None
        self.finished = False  # nothing more to read from this worker

    def poll(self, fwd):
        if self.finished:
            return
        self._read_metrics()
        if self.started:
            self._read_log(fwd)
        # the runner writes it in place: ended once it parses whole, and
        # the log whole unless it says not yet (the pump still writing)
        st = _read_json(os.path.join(self.dir, "status.json"))
        exited = isinstance(st, dict)
        ended = exited and st.get("logComplete") is not False
        if exited and self.said_end is None:
            self._read_metrics()  # "done" may have landed just before
            if self.said_end is None:
                # ended without telling the helper: crashed or killed
                self.error = "exited with code %s (%s) %s" % (
                    st.get("exitCode"), st.get("reason"),
                    st.get("message", ""))
                self.said_end = time.time()
                self.started = True
        if self.said_end is None:
            return
        if self.lend is not None:
            self._read_log(fwd)  # up to where the worker said it ended
        elif ended:
            self._read_log(fwd)  # the pod has ended: its log is whole
        elif time.time() - self.said_end >= _LOG_DRAIN_S:
            self._read_log(fwd)
            self._end_lines(fwd)
            print("[flexq: %s's log was not complete %g s after its "
                  "training loop ended; what it wrote later is only in its "
                  "own log]" % (self.pod, _LOG_DRAIN_S), flush=True)
            self.finished = True
            return
        else:
            return  # finished its loop; its last bytes may be on their way
        self._end_lines(fwd)
        self.finished = True

    def _read_metrics(self):
        try:
            with open(os.path.join(self.dir, "metrics.jsonl"), "rb") as f:
                f.seek(self.moff)
                data = f.read()
        except OSError:
            return
        end = data.rfind(b"\n")
        if end < 0:
            return
        self.moff += end + 1
        for line in data[:end].split(b"\n"):
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            kind = ev.get("event")
            if kind == "start":
                self.rank = ev.get("rank")
                self.pid = ev.get("pid", "?")
                self.ip = ev.get("ip", self.ip)
                if not self.started and ev.get("log_offset") is not None:
                    self.loff = ev["log_offset"]
                self.started = True
            elif kind == "report":
                self.metrics = ev.get("metrics")
                self.history.append(self.metrics)
            elif kind in ("done", "error") and self.said_end is None:
                self.lend = ev.get("log_offset")
                self.said_end = time.time()
                self.started = True
                if kind == "error":
                    self.error = ev.get("error")

    def _read_log(self, fwd):
        path = os.path.join(self.dir, "log")
        for _ in range(self._MAX_TURNS):
            if self.log is None:
                try:
                    self.log = open(path, "rb")
                except OSError:
                    return
                self.log.seek(self.loff)
            if self.lend is not None:  # a regular file: never rotated
                self._forward(fwd, self.log.read(max(self.lend - self.loff,
                                                     0)))
                return
            self._forward(fwd, self.log.read())
            try:
                now = os.stat(path)
                mine = os.fstat(self.log.fileno())
            except OSError:
                return
            if (now.st_ino, now.st_dev) == (mine.st_ino, mine.st_dev):
                return
            # Rotated: what the pump wrote before it renamed the file is
            # in it now; then log.1 if it is a newer part than this one
            # (a rotation not seen), then the new log from its start.
            self._forward(fwd, self.log.read())
            self.log.close()
            self.log = None
            try:
                with open(path + ".1", "rb") as f:
                    one = os.fstat(f.fileno())
                    if (one.st_ino, one.st_dev) not in (
                            (mine.st_ino, mine.st_dev),
                            (now.st_ino, now.st_dev)):
                        self._forward(fwd, f.read())
            except OSError:
                pass
            self.loff = 0  # the new log, from its start

    def _forward(self, fwd, data):
        self.loff += len(data)
        self.buf += data
        *lines, self.buf = self.buf.split(b"\n")
        for ln in lines:
            fwd.line(self, ln.decode("utf-8", "replace"))

    def _end_lines(self, fwd):
        """A last line without its newline is a line too."""
        if self.buf:
            fwd.line(self, self.buf.decode("utf-8", "replace"))
            self.buf = b""
        if self.log is not None:
            self.log.close()
            self.log = None


class _Forwarder:
    """Ray's log forwarding and deduplication, on the driver's stdout.

    The first copy of a line is printed at once with its worker's prefix;
    identical lines from other workers within the window are counted and
    printed once as "<line> [repeated Nx across cluster]"."""

    def __init__(self, name):
        self.name = name
        self.dedup = os.environ.get("RAY_DEDUP_LOGS", "1") != "0"
        self.seen = {}  # text -> [first time, repeats, prefix, first pod]
        self.told = False
        self.world = 0  # workers followed; a line all of them printed
        #                 is folded at once

    def prefix(self, w):
        return "(%s pid=%s, ip=%s)" % (self.name, w.pid, w.ip)

    def line(self, w, text):
        now = time.time()
        if self.dedup:
            s = self.seen.get(text)
            if s and now - s[0] < _DEDUP_WINDOW_S and s[3] != w.pod:
                s[1] += 1
                s[2] = self.prefix(w)
                if self.world and s[1] + 1 >= self.world:
                    # every worker said it: no need to wait for the window
                    self._emit_repeat(text, s)
                    del self.seen[text]
                return
            if s and s[1]:
                self._emit_repeat(text, s)
            self.seen[text] = [now, 0, self.prefix(w), w.pod]
        print("%s %s" % (self.prefix(w), text), flush=True)

    def _emit_repeat(self, text, s):
        print("%s %s [repeated %dx across cluster]" % (s[2], text, s[1]),
              flush=True)
        if not self.told:
            self.told = True
            print("(flexq deduplicates logs like Ray. Set RAY_DEDUP_LOGS=0 "
                  "to disable log deduplication.)", flush=True)
        s[1] = 0

    def flush_expired(self):
        now = time.time()
        for text, s in list(self.seen.items()):
            if now - s[0] >= _DEDUP_WINDOW_S:
                if s[1]:
                    self._emit_repeat(text, s)
                del self.seen[text]

    def flush_all(self):
        for text, s in list(self.seen.items()):
            if s[1]:
                self._emit_repeat(text, s)
        self.seen.clear()


def _read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None
