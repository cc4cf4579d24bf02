"""Tests of python/ray, the Ray Train surface over flexq's helper: the
tutorial's own train.py runs unchanged with python/ on PYTHONPATH, the
names it imports are flexq's, and a real `jax` on the path wins over the
stand-in. Standard library only; run directly or through ctest."""

import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PY = os.path.join(ROOT, "python")
SEED_TRAIN = os.path.join(ROOT, "..", "shared", "seed", "train.py")


def run(code_or_file, extra_path=(), args=()):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([PY] + list(extra_path))
    for k in list(env):
        if k.startswith("FLEXQ_"):
            del env[k]
    cmd = [sys.executable]
    cmd += [code_or_file] if os.path.isfile(code_or_file) else ["-c",
                                                                code_or_file]
    return subprocess.run(cmd + list(args), env=env, capture_output=True,
                          text=True, timeout=120)


class RayShim(unittest.TestCase):
    def test_names_are_flexqs(self):
        p = run("import ray, flexq.train as f\n"
                "from ray import train\n"
                "from ray.train import ScalingConfig\n"
                "from ray.train.v2.jax import JaxTrainer\n"
                "assert train.report is f.report\n"
                "assert ScalingConfig is f.ScalingConfig\n"
                "assert JaxTrainer is f.JaxTrainer\n"
                "ray.init(); assert ray.is_initialized(); ray.shutdown()\n"
                "print('ok')")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), "ok")

    def test_jax_stand_in_only_without_jax(self):
        p = run("import ray, jax, jax.numpy as jnp\n"
                "print(jax.__name__, jnp.zeros((2, 1)).size)")
        self.assertEqual(p.returncode, 0, p.stderr)
        try:
            import jax  # noqa: F401
            self.skipTest("a real jax is installed here")
        except ImportError:
            pass
        self.assertEqual(p.stdout.split()[0], "flexq.jaxlite")
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "jax"))
            with open(os.path.join(d, "jax", "__init__.py"), "w") as f:
                f.write("REAL = True\n")
            p = run("import ray, jax; print(jax.__name__, jax.REAL)",
                    extra_path=[d])
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout.split(), ["jax", "True"])

    @unittest.skipUnless(os.path.isfile(SEED_TRAIN),
                         "the seed's train.py is not beside the repository")
    def test_seed_train_unchanged(self):
        p = run(SEED_TRAIN)
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        self.assertIn("Starting training...", lines)
        self.assertIn("Epoch 40: Loss 0.0000", lines)
        self.assertIn("Training Complete!", lines)
        self.assertTrue(lines[-1].startswith("Run Result: {'loss': "),
                        lines[-1])
        self.assertIn("'epoch': 40}", lines[-1])


if __name__ == "__main__":
    unittest.main()
