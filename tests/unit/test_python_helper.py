"""Tests of python/flexq: roles, report(), the driver's log forwarding and
folding, the Result, the submitter's banner, and examples/train.py.

Worker pods are played by real subprocesses whose stdout is their pod's
log file, in a pod-directory layout like the runner's; the driver under
test follows them. With `pipe=True` their stdout is a pipe copied into the
log by a thread, as flexqd's log pump does (logpump.c: a cap, rotation to
log.1 with a note), and status.json is written only once the pipe is
drained, as the runner does. Standard library only; run directly or
through ctest.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PY = os.path.join(ROOT, "python")
sys.path.insert(0, PY)

WORKER_SCRIPT = r'''
import os, sys, time
from flexq import train
from flexq.train import JaxTrainer, ScalingConfig

def loop():
    rank = train.get_context().get_world_rank()
    print("Starting training...")
    for epoch in range(3):
        train.report({"epoch": epoch, "loss": 1.0 / (epoch + 1 + rank)})
        print("Epoch %d: rank line %d" % (epoch, rank))
    if os.environ.get("FAIL_RANK") == str(rank):
        raise RuntimeError("boom on rank %d" % rank)
    print("Training Complete!")

res = JaxTrainer(train_loop_per_worker=loop,
                 scaling_config=ScalingConfig(num_workers=2)).fit()
print("Run Result: %s" % (res.metrics,))
'''


class Cluster:
    """A temporary data dir with pod dirs for one head and N workers."""

    def __init__(self, n, env_extra=None, pipe=False, cap=None):
        self.dir = tempfile.mkdtemp(prefix="flexq-py-")
        self.pipe, self.cap = pipe, cap
        self.pumps = []
        self.ns = os.path.join(self.dir, "pods", "default")
        self.script = os.path.join(self.dir, "script.py")
        with open(self.script, "w") as f:
            f.write(WORKER_SCRIPT)
        self.procs = []
        for i in range(n):
            self.start_worker(i, env_extra or {})

    def pod_dir(self, name, node_type):
        d = os.path.join(self.ns, name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "pod.json"), "w") as f:
            json.dump({"metadata": {"name": name, "labels": {
                "ray.io/cluster": "c1", "ray.io/node-type": node_type}}}, f)
        return d

    def env(self, d, name):
        e = dict(os.environ)
        e.update({"PYTHONPATH": PY, "FLEXQ_DATA_DIR": self.dir,
                  "FLEXQ_POD_NAMESPACE": "default", "FLEXQ_POD_NAME": name,
                  "FLEXQ_RAY_CLUSTER": "c1", "FLEXQ_POD_DIR": d,
                  "FLEXQ_METRICS_FILE": os.path.join(d, "metrics.jsonl"),
                  "PYTHONUNBUFFERED": "1", "RAY_DEDUP_LOGS_AGG_WINDOW_S": "30"})
        return e

    def start_worker(self, i, extra):
        name = "c1-tpu-group-worker-%d" % i
        d = self.pod_dir(name, "worker")
        e = self.env(d, name)
        e.update({"FLEXQ_RAY_ROLE": "worker", "RANK": str(i),
                  "WORLD_SIZE": "2", "FLEXQ_POD_IP": "127.0.0.%d" % (i + 1)})
        e.update(extra)
        if self.pipe:
            r, w = os.pipe()
            p = subprocess.Popen([sys.executable, self.script], env=e,
                                 stdout=w, stderr=subprocess.STDOUT)
            os.close(w)
            t = threading.Thread(target=self.pump, args=(r, d), daemon=True)
            t.start()
            self.pumps.append(t)
        else:
            log = open(os.path.join(d, "log"), "ab")
            p = subprocess.Popen([sys.executable, self.script], env=e,
                                 stdout=log, stderr=subprocess.STDOUT)
            log.close()
        self.procs.append((p, d))

    def pump(self, r, d):
        """flexqd's log pump for one pod: the pipe into `log`, at most
        `cap` bytes a file, then log -> log.1 and a new log with a note."""
        path = os.path.join(d, "log")
        log = open(path, "ab")
        size = 0
        while True:
            data = os.read(r, 65536)
            if not data:
                break
            while data:
                if self.cap and size >= self.cap:
                    log.close()
                    os.replace(path, path + ".1")
                    log = open(path, "ab")
                    note = b"flexq: log rotated\n"
                    log.write(note)
                    size = len(note)
                room = self.cap - size if self.cap else len(data)
                log.write(data[:room])
                log.flush()
                size += len(data[:room])
                data = data[room:]
        log.close()
        os.close(r)

    def reap(self):
        for i, (p, d) in enumerate(self.procs):
            code = p.wait(timeout=60)
            if self.pipe:  # the runner: status.json once the log is whole
                self.pumps[i].join(60)
            with open(os.path.join(d, "status.json"), "w") as f:
                json.dump({"phase": "Succeeded" if code == 0 else "Failed",
                           "exitCode": code}, f)

    def driver(self, extra=None):
        d = self.pod_dir("submitter", "submitter")
        e = self.env(d, "submitter")
        e["FLEXQ_RAY_ROLE"] = "driver"
        e.update(extra or {})
        return subprocess.run([sys.executable, self.script], env=e,
                              capture_output=True, text=True, timeout=90)

    def close(self):
        for p, _ in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


class DriverTest(unittest.TestCase):
    def test_forwards_folds_and_returns_rank0_metrics(self):
        c = Cluster(2)
        try:
            c.reap()
            out = c.driver()
            self.assertEqual(out.returncode, 0, out.stderr)
            lines = out.stdout.splitlines()
            self.assertTrue(any(l.startswith("(RayTrainWorker pid=") and
                                ", ip=127.0.0.1) Epoch 0: rank line 0" in l
                                for l in lines), out.stdout)
            self.assertTrue(any("ip=127.0.0.2) Epoch 2: rank line 1" in l
                                for l in lines), out.stdout)
            folded = [l for l in lines if "Training Complete! [repeated 1x "
                      "across cluster]" in l]
            self.assertEqual(len(folded), 1, out.stdout)
            plain = [l for l in lines if l.endswith(") Training Complete!")]
            self.assertEqual(len(plain), 1, out.stdout)
            # rank 0's last report, not rank 1's
            self.assertIn("Run Result: {'epoch': 2, 'loss': 0.3333", out.stdout)
            # the workers did not print the driver's line
            for _, d in c.procs:
                with open(os.path.join(d, "log")) as f:
                    self.assertNotIn("Run Result", f.read())
        finally:
            c.close()

    def test_failing_worker_fails_the_driver(self):
        c = Cluster(2, {"FAIL_RANK": "1"})
        try:
            c.reap()
            out = c.driver()
            self.assertNotEqual(out.returncode, 0)
            self.assertIn("TrainingFailedError", out.stderr)
            self.assertIn("boom on rank 1", out.stderr)
        finally:
            c.close()

    def test_dedup_off(self):
        c = Cluster(2)
        try:
            c.reap()
            out = c.driver({"RAY_DEDUP_LOGS": "0"})
            self.assertEqual(out.stdout.count(") Training Complete!"), 2)
            self.assertNotIn("repeated", out.stdout)
        finally:
            c.close()


class PipeTest(unittest.TestCase):
    """Workers whose stdout is a pipe, as under flexqd's runner: the
    helper cannot learn its place in the log from its stdout (a pipe's
    size is 0), so the driver reads a finished worker's log to its end
    once the pod has ended. These lines were lost when the driver read a
    worker's start and end in one turn (a driver paused, or started late:
    e2e.seed's paused driver)."""

    def test_driver_after_workers_ended_forwards_every_line(self):
        c = Cluster(2, pipe=True)
        try:
            c.reap()  # the driver "paused" over the workers' whole run
            out = c.driver()
            self.assertEqual(out.returncode, 0, out.stderr)
            lines = out.stdout.splitlines()
            for rank in (0, 1):
                self.assertTrue(any("ip=127.0.0.%d) Epoch 2: rank line %d"
                                    % (rank + 1, rank) in l for l in lines),
                                out.stdout)
            self.assertEqual(len([l for l in lines
                                  if l.endswith(") Training Complete!")]), 1,
                             out.stdout)
            self.assertEqual(len([l for l in lines if "Training Complete! "
                                  "[repeated 1x across cluster]" in l]), 1,
                             out.stdout)
        finally:
            c.close()

    def test_driver_follows_rotation(self):
        c = Cluster(2, pipe=True, cap=80)
        try:
            c.reap()
            for _, d in c.procs:  # the log really rotated
                self.assertTrue(os.path.exists(os.path.join(d, "log.1")))
            out = c.driver({"RAY_DEDUP_LOGS": "0"})
            self.assertEqual(out.returncode, 0, out.stderr)
            # what rotation replaced is gone by design; the driver still
            # forwards the last part, whatever file it is in now
            self.assertEqual(out.stdout.count(") Training Complete!"), 2,
                             out.stdout)
        finally:
            c.close()

    def test_worker_follows_rotations_while_it_reads(self):
        """The driver's reader across the pump's rotations: one it sees
        happen, then two between its reads (log.1 is then a newer part
        than the file it holds, and is read before the new log)."""
        from flexq import train
        d = tempfile.mkdtemp(prefix="flexq-py-rot-")
        try:
            log = os.path.join(d, "log")

            def put(name, text, mode="ab"):
                with open(os.path.join(d, name), mode) as f:
                    f.write(text.encode())

            def rotate(note="flexq: log rotated\n"):
                os.replace(log, log + ".1")
                put("log", note, "wb")

            class Fwd:
                lines = []

                def line(self, w, text):
                    self.lines.append(text)

            fwd = Fwd()
            put("metrics.jsonl", json.dumps({"event": "start", "rank": 0,
                                             "log_offset": None}) + "\n")
            put("log", "a1\na2\n")
            w = train._Worker(d)
            w.poll(fwd)
            self.assertEqual(fwd.lines, ["a1", "a2"])
            put("log", "a3\n")
            rotate()
            put("log", "b1\n")
            w.poll(fwd)
            self.assertEqual(fwd.lines[2:], ["a3", "flexq: log rotated",
                                             "b1"])
            put("log", "b2\n")
            rotate("note c\n")
            put("log", "c1\n")
            rotate("note d\n")
            put("log", "d1\npartial")
            put("metrics.jsonl", json.dumps({"event": "done", "rank": 0,
                                             "log_offset": None}) + "\n")
            w.poll(fwd)  # b2 from the file it holds, c from log.1, then d
            self.assertEqual(fwd.lines[5:], ["b2", "note c", "c1", "note d",
                                             "d1"])
            self.assertFalse(w.finished)  # said done, but the pod runs on
            put("log", " line\n")
            put("status.json", '{"phase": "Succeeded", "exitCode": 0}')
            w.poll(fwd)
            self.assertTrue(w.finished)
            self.assertEqual(fwd.lines[10:], ["partial line"])
            self.assertIsNone(w.error)
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def test_waits_for_a_log_said_incomplete(self):
        """status.json with logComplete false (the runner reported the pod
        before its log pump had written its last bytes): the driver reads
        on until it says true."""
        from flexq import train
        d = tempfile.mkdtemp(prefix="flexq-py-late-")
        try:
            def put(name, text, mode="ab"):
                with open(os.path.join(d, name), mode) as f:
                    f.write(text.encode())

            class Fwd:
                lines = []

                def line(self, w, text):
                    self.lines.append(text)

            fwd = Fwd()
            for ev in ("start", "done"):
                put("metrics.jsonl", json.dumps({"event": ev, "rank": 0,
                                                 "log_offset": None}) + "\n")
            put("log", "first\n")
            put("status.json", '{"phase": "Succeeded", "exitCode": 0, '
                '"logComplete": false}', "wb")
            w = train._Worker(d)
            w.poll(fwd)
            self.assertFalse(w.finished)
            put("log", "last")
            put("status.json", '{"phase": "Succeeded", "exitCode": 0, '
                '"logComplete": true}', "wb")
            w.poll(fwd)
            self.assertTrue(w.finished)
            self.assertEqual(fwd.lines, ["first", "last"])
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def test_pod_never_ends_after_done_is_said(self):
        c = Cluster(1, pipe=True)
        try:
            c.procs[0][0].wait(timeout=60)
            c.pumps[0].join(60)  # log whole, but no status.json ever
            out = c.driver({"FLEXQ_LOG_DRAIN_S": "0.5",
                            "FLEXQ_WORKER_PODS": "c1-tpu-group-worker-0"})
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertIn(") Training Complete!", out.stdout)
            self.assertIn("[flexq: c1-tpu-group-worker-0's log was not "
                          "complete 0.5 s after its training loop ended",
                          out.stdout)
        finally:
            c.close()


class LocalTest(unittest.TestCase):
    def test_local_mode_runs_loop_once(self):
        import importlib
        from flexq import train
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("FLEXQ_") and k != "RANK"}
        old = dict(os.environ)
        os.environ.clear()
        os.environ.update(env)
        try:
            importlib.reload(train)
            calls = []

            def loop():
                calls.append(1)
                train.report({"loss": 0.5})

            res = train.JaxTrainer(train_loop_per_worker=loop).fit()
            self.assertEqual(calls, [1])
            self.assertEqual(res.metrics, {"loss": 0.5})
            from flexq import train as alias
            self.assertIs(alias.report, train.report)
        finally:
            os.environ.clear()
            os.environ.update(old)

    def test_example_train_py_standalone(self):
        e = {k: v for k, v in os.environ.items() if not k.startswith("FLEXQ_")}
        e["PYTHONPATH"] = PY
        e["FLEXQ_EXAMPLE_NO_SLEEP"] = "1"
        code = ("import time, runpy; time.sleep = lambda s: None; "
                "runpy.run_path(%r, run_name='__main__')"
                % os.path.join(ROOT, "examples", "train.py"))
        out = subprocess.run([sys.executable, "-c", code], env=e,
                             capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        for want in ("Starting training...", "Epoch 0: Loss ",
                     "Epoch 40: Loss 0.0000", "Training Complete!",
                     "Run Result: {'loss': "):
            self.assertIn(want, out.stdout)


class JaxliteTest(unittest.TestCase):
    def test_dual_grad_matches_differences(self):
        from flexq import jaxlite as jax
        if jax._np is not None:
            self.skipTest("numpy present: the dual path is for plain Python")
        jnp = jax.numpy
        x = jax.random.normal(1, (50, 3))
        y = jnp.dot(x, jax.random.normal(2, (3, 1)))
        w = jax.random.normal(3, (3, 1))

        def loss(w):
            return jnp.mean((jnp.dot(x, w) - y) ** 2)

        g = jax.grad(loss)(w)
        self.assertEqual(g.shape, (3, 1))
        h = 1e-4
        for i in range(3):
            up = [list(r) for r in w.rows]
            dn = [list(r) for r in w.rows]
            up[i][0] += h
            dn[i][0] -= h
            fd = (loss(jax.Array(up, w.shape)).item() -
                  loss(jax.Array(dn, w.shape)).item()) / (2 * h)
            self.assertAlmostEqual(g.rows[i][0], fd, places=5)


class SubmitTest(unittest.TestCase):
    def test_banner_and_exit_code(self):
        e = dict(os.environ)
        e["PYTHONPATH"] = PY
        e["RAY_DASHBOARD_ADDRESS"] = "c1-head-svc.default.svc:8265"
        e["RAY_JOB_SUBMISSION_ID"] = "rayjob-x-498t6"
        ok = subprocess.run([sys.executable, "-m", "flexq.submit", "--",
                             sys.executable, "-c", "print('driver says hi')"],
                            env=e, capture_output=True, text=True, timeout=60)
        self.assertEqual(ok.returncode, 0, ok.stderr)
        self.assertIn("Job 'rayjob-x-498t6' submitted successfully", ok.stdout)
        self.assertIn("driver says hi", ok.stdout)
        last = ok.stdout.strip().splitlines()[-2]
        self.assertRegex(last, r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\tSUCC "
                         r"cli.py:66 -- Job 'rayjob-x-498t6' succeeded$")
        dashes = ok.stdout.strip().splitlines()[-1].split(" -- ")[1]
        self.assertEqual(len(dashes), len("Job 'rayjob-x-498t6' succeeded"))
        bad = subprocess.run([sys.executable, "-m", "flexq.submit",
                              sys.executable, "-c", "import sys; sys.exit(3)"],
                             env=e, capture_output=True, text=True, timeout=60)
        self.assertEqual(bad.returncode, 3)
        self.assertIn("Job 'rayjob-x-498t6' failed", bad.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
