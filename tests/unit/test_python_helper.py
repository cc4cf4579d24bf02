"""Tests of python/flexq: roles, report(), the driver's log forwarding and
folding, the Result, the submitter's banner, and examples/train.py.

Worker pods are played by real subprocesses whose stdout is their pod's
log file, in a pod-directory layout like the runner's; the driver under
test follows them. Standard library only; run directly or through ctest.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
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

    def __init__(self, n, env_extra=None):
        self.dir = tempfile.mkdtemp(prefix="flexq-py-")
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
        log = open(os.path.join(d, "log"), "ab")
        p = subprocess.Popen([sys.executable, self.script], env=e,
                             stdout=log, stderr=subprocess.STDOUT)
        log.close()
        self.procs.append((p, d))

    def reap(self):
        for p, d in self.procs:
            code = p.wait(timeout=60)
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
