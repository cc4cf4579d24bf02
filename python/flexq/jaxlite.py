"""A tiny stand-in for the part of JAX the tutorial's train.py uses.

examples/train.py imports JAX when it is installed; otherwise it imports
this module as `jax` (and `jax.numpy` as `jnp`). It offers local_devices,
random.PRNGKey / random.normal, numpy.dot / zeros / mean, jit (a no-op) and
grad. Arrays are numpy arrays when numpy is importable, else a small
pure-Python 2-D array class.

grad is forward-mode differentiation with one tangent per weight (dual
numbers) for the operations the tutorial's loss uses (dot with the weights
on the right, +, -, * and ** with scalars, mean), which is exact; anything
else, and the numpy path, fall back to central differences, which are
exact for the tutorial's quadratic loss (no third derivative) and good
enough for a demo elsewhere. It is not JAX's autodiff and makes no claim
to be.
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


class _Dual:
    """A column of values, each with its derivatives with respect to the
    k weights grad() differentiates by (tan: one list of k per value;
    None while it is the identity, i.e. the weights themselves)."""

    def __init__(self, val, tan, shape):
        self.val, self.tan, self.shape = val, tan, shape

    def _tan(self, i):
        if self.tan is not None:
            return self.tan[i]
        t = [0.0] * len(self.val)
        t[i] = 1.0
        return t

    def _other(self, o):
        if isinstance(o, Array):
            return o._flat()
        if isinstance(o, _Dual):
            raise TypeError("dual op dual")
        return [float(o)] * len(self.val)

    def __sub__(self, o):
        ov = self._other(o)
        return _Dual([a - b for a, b in zip(self.val, ov)],
                     [self._tan(i) for i in range(len(self.val))], self.shape)

    def __add__(self, o):
        ov = self._other(o)
        return _Dual([a + b for a, b in zip(self.val, ov)],
                     [self._tan(i) for i in range(len(self.val))], self.shape)

    __radd__ = __add__

    def __rsub__(self, o):
        ov = self._other(o)
        return _Dual([b - a for a, b in zip(self.val, ov)],
                     [[-t for t in self._tan(i)]
                      for i in range(len(self.val))], self.shape)

    def __mul__(self, o):
        if isinstance(o, (Array, _Dual)):
            raise TypeError("dual times array")
        c = float(o)
        return _Dual([a * c for a in self.val],
                     [[t * c for t in self._tan(i)]
                      for i in range(len(self.val))], self.shape)

    __rmul__ = __mul__

    def __pow__(self, p):
        p = float(p)
        out, tan = [], []
        for i, a in enumerate(self.val):
            out.append(a ** p)
            d = p * a ** (p - 1)
            tan.append([t * d for t in self._tan(i)])
        return _Dual(out, tan, self.shape)


def _dual_dot(a, b):
    if not isinstance(a, Array) or len(b.shape) != 2 or b.shape[1] != 1:
        raise TypeError("unsupported dual dot")
    val = [math.fsum(map(_mul, r, b.val)) for r in a.rows]
    if b.tan is None:  # d(a w)/dw = the rows of a
        tan = [list(r) for r in a.rows]
    else:
        cols = list(zip(*b.tan))
        tan = [[math.fsum(map(_mul, r, c)) for c in cols] for r in a.rows]
    return _Dual(val, tan, (a.shape[0], 1))


def _dual_mean(a):
    n = len(a.val)
    tan = [math.fsum(c) / n for c in zip(*[a._tan(i) for i in range(n)])]
    return _Dual([math.fsum(a.val) / n], [tan], ())


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
        if isinstance(b, _Dual):
            return _dual_dot(a, b)
        if _np is not None:
            return _np.dot(a, b)
        cols = [list(c) for c in zip(*b.rows)]
        return Array([[math.fsum(map(_mul, r, c)) for c in cols]
                      for r in a.rows], (a.shape[0], b.shape[1]))

    @staticmethod
    def mean(a):
        if isinstance(a, _Dual):
            return _dual_mean(a)
        if _np is not None:
            return _np.mean(a)
        f = a._flat()
        return Array(math.fsum(f) / len(f), ())


random = _Random()
numpy = _Numpy()


def grad(f, h=1e-3):
    """d f / d w for a scalar f of one array argument (dual numbers, else
    central differences; see the module docstring)."""

    def g(w):
        if _np is None and isinstance(w, Array):
            try:
                out = f(_Dual(w._flat(), None, w.shape))
                if isinstance(out, _Dual) and len(out.val) == 1:
                    d = out.tan[0]
                    cols = w.shape[1]
                    return Array([d[r * cols:(r + 1) * cols]
                                  for r in range(w.shape[0])], w.shape)
            except TypeError:
                pass  # an operation duals do not cover
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
