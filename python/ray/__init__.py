"""The part of Ray a flexq pod needs, so Ray Train scripts run unchanged.

flexqd puts python/ on every pod's PYTHONPATH; a script written for Ray
Train on KubeRay (the tutorial's train.py) imports

    import ray
    from ray import train                    -> flexq.train
    from ray.train import ScalingConfig      -> flexq.train.ScalingConfig
    from ray.train.v2.jax import JaxTrainer  -> flexq.train.JaxTrainer

and runs on flexq's training helper (see flexq/__init__.py for how the
driver and the worker pods play their roles).

JAX: importing this package makes `import jax` fall back to flexq's
pure-Python stand-in (flexq.jaxlite) only when no real JAX is importable:
the fallback finder sits at the end of sys.meta_path, after every normal
finder, so a machine with JAX runs real JAX.

What it is not: Ray. There is no object store, no tasks or actors; init()
and shutdown() are accepted and do nothing. A real Ray installed on the
same path is shadowed inside flexq pods.
"""

import importlib.abc
import importlib.machinery
import importlib.util
import sys

from flexq import train  # noqa: F401  (ray.train)

__all__ = ["train", "init", "shutdown", "is_initialized"]
__version__ = "2.53.0+flexq"

_initialized = False


def init(*_args, **_kwargs):
    """Accepted for scripts that call it; flexq needs no Ray runtime."""
    global _initialized
    _initialized = True


def is_initialized():
    return _initialized


def shutdown():
    global _initialized
    _initialized = False


class _JaxFallback(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds `jax` and `jax.numpy` as flexq.jaxlite when nothing else did."""

    def find_spec(self, name, path=None, target=None):
        if name not in ("jax", "jax.numpy"):
            return None
        return importlib.machinery.ModuleSpec(name, self,
                                              is_package=name == "jax")

    def create_module(self, spec):
        from flexq import jaxlite
        if spec.name == "jax":
            return jaxlite
        return jaxlite.numpy

    def exec_module(self, module):
        pass


def _install_jax_fallback():
    if any(isinstance(f, _JaxFallback) for f in sys.meta_path):
        return
    sys.meta_path.append(_JaxFallback())


_install_jax_fallback()
