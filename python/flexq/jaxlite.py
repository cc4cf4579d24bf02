"""A tiny stand-in for the part of JAX the tutorial's train.py uses.

examples/train.py imports JAX when it is installed; otherwise it imports
this module as `jax` (and `jax.numpy` as `jnp`). It offers local_devices,
random.PRNGKey / random.normal, numpy.dot / zeros / mean, jit (a no-op) and
grad. Arrays are numpy arrays when numpy is importable, else a small
pure-Python 2-D array class.

grad uses central differences. That is exact for the tutorial's loss,
which is quadratic in the weights (the third derivative is zero, so the
central difference has no truncation error), and good enough elsewhere for
a demo; it is not JAX's autodiff and makes no claim to be.
"""

import math
import random as _random
from operator import mul as _mul

try:
    import numpy as _np
except ImportError:  # plain Python from here on
    _np = None

__all__ = ["local_devices", "devices", "random", "numpy", "jit", "grad"]


class _CpuDevice:
    def __init__(self, i):
        self.id = i
        self.platform = "cpu"

    def __repr__(self):
        return "CpuDevice(id=%d)" % self.id


def local_devices():
    return [_CpuDevice(0)]


devices = local_devices


def jit(fn=None, **_kw):
    if fn is None:
        return lambda f: f
    return fn


class Array:
    """Row-major 2-D array of floats (1-D and scalars as shapes (n,) / ())."""

    def __init__(self, rows, shape):
        self.rows = rows  # list of lists, or a float for shape ()
        self.shape = shape

    # --- conversions ---
    def item(self):
        if self.shape == ():
            return float(self.rows)
        if self.size == 1:
            return float(self._flat()[0])
        raise ValueError("only one-element arrays convert to a scalar")

    @property
    def size(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    def _flat(self):
        if self.shape == ():
            return [self.rows]
        return [v for r in self.rows for v in r]

    def __float__(self):
        return self.item()

    def __format__(self, spec):
        return format(self.item(), spec) if self.size == 1 else repr(self)

    def __repr__(self):
        if self.shape == ():
            return "Array(%r)" % self.rows
        return "Array(%r)" % (self.rows,)

    # --- arithmetic, elementwise with scalars or same shapes ---
    def _map2(self, other, op):
        if isinstance(other, Array):
            if other.shape == ():
                other = other.rows
            else:
                return Array([[op(a, b) for a, b in zip(ra, rb)]
                              for ra, rb in zip(self.rows, other.rows)],
                             self.shape)
        if self.shape == ():
            return Array(op(self.rows, other), ())
        return Array([[op(a, other) for a in r] for r in self.rows],
                     self.shape)

    def __sub__(self, o):
        return self._map2(o, lambda a, b: a - b)

    def __rsub__(self, o):
        return self._map2(o, lambda a, b: b - a)

    def __add__(self, o):
        return self._map2(o, lambda a, b: a + b)

    __radd__ = __add__

    def __mul__(self, o):
        return self._map2(o, lambda a, b: a * b)

    __rmul__ = __mul__

    def __truediv__(self, o):
        return self._map2(o, lambda a, b: a / b)

    def __pow__(self, p):
        return self._map2(p, lambda a, b: a ** b)

    def __neg__(self):
        return self._map2(-1.0, lambda a, b: a * b)


class _Random:
    @staticmethod
    def PRNGKey(seed):
        return int(seed)

    @staticmethod
    def normal(key, shape):
        rng = _random.Random(key)
        if _np is not None:
            return _np.array([rng.gauss(0.0, 1.0)
                              for _ in range(shape[0] * shape[1])]
                             ).reshape(shape)
        return Array([[rng.gauss(0.0, 1.0) for _ in range(shape[1])]
                      for _ in range(shape[0])], tuple(shape))


class _Numpy:
    @staticmethod
    def zeros(shape):
        if _np is not None:
            return _np.zeros(shape)
        return Array([[0.0] * shape[1] for _ in range(shape[0])],
                     tuple(shape))

    @staticmethod
    def dot(a, b):
        if _np is not None:
            return _np.dot(a, b)
        cols = [list(c) for c in zip(*b.rows)]
        return Array([[math.fsum(map(_mul, r, c)) for c in cols]
                      for r in a.rows], (a.shape[0], b.shape[1]))

    @staticmethod
    def mean(a):
        if _np is not None:
            return _np.mean(a)
        f = a._flat()
        return Array(math.fsum(f) / len(f), ())


random = _Random()
numpy = _Numpy()


def grad(f, h=1e-3):
    """d f / d w for a scalar f of one array argument (central
    differences; see the module docstring)."""

    def g(w):
        if _np is not None:
            out = _np.zeros_like(w, dtype=float)
            flat = w.reshape(-1)
            for i in range(flat.size):
                old = flat[i]
                flat[i] = old + h
                up = float(f(w))
                flat[i] = old - h
                down = float(f(w))
                flat[i] = old
                out.reshape(-1)[i] = (up - down) / (2 * h)
            return out
        rows = [list(r) for r in w.rows]
        out = [[0.0] * len(r) for r in rows]
        for i, r in enumerate(rows):
            for j, old in enumerate(r):
                r[j] = old + h
                up = f(Array(rows, w.shape)).item()
                r[j] = old - h
                down = f(Array(rows, w.shape)).item()
                r[j] = old
                out[i][j] = (up - down) / (2 * h)
        return Array(out, w.shape)

    return g
