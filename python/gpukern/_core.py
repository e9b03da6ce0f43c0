# SPDX-License-Identifier: MIT
"""Contexts and their operations: the argument checks and the call path around the C calls."""

import math
import operator
import threading
from ctypes import byref, c_double, c_void_p

import numpy as np

from . import _lib
from ._array import Array, _new_array
from ._base import (
    _BACKEND_NAMES,
    _BACKENDS,
    _F32,
    _F64,
    _GK_DTYPE,
    LIB,
    LIBRARY_PATH,
    GpukernError,
    Status,
    _address,
    _error,
    _float_dtype,
    _gk_add,
    _gk_axpy,
    _gk_backend_available,
    _gk_buffer_create,
    _gk_buffer_destroy,
    _gk_buffer_wrap_host,
    _gk_buffer_write,
    _gk_dot,
    _gk_exp,
    _gk_gemm,
    _gk_mul,
    _gk_nrm2,
    _gk_rbf_matrix,
    _gk_rbf_matvec,
    _gk_rbf_rows,
    _gk_rng_normal,
    _gk_rng_uniform,
    _gk_scale,
    _gk_sub,
    _gk_sum,
    _lib_version,
    _shape,
    _u64,
)

__all__ = ["Array", "Context", "GpukernError", "LIBRARY_PATH", "Status", "available_backends"]


def available_backends():
    """Names of the backends usable on this machine, e.g. ["cpu"] or ["cpu", "cuda"]."""
    return [name for code, name in sorted(_BACKEND_NAMES.items()) if _gk_backend_available(code)]


def _operand(a, what):
    """An input as an Array or a C-contiguous native-float ndarray (copied once if need be)."""
    if type(a) is Array:
        return a
    if isinstance(a, np.ndarray):
        dt = a.dtype
        if dt is not _F32 and dt is not _F64:
            dt = _float_dtype(dt, what)
        return np.asarray(a, dtype=dt, order="C")
    raise TypeError("%s must be a numpy.ndarray or a gpukern.Array, not %s" % (what, type(a).__name__))


def _target(a, shape, dtype, what):
    """Checks an operand the call writes (out=, axpy's y, scale's x, gemm's c)."""
    if type(a) is Array:
        dt = a._dtype
    elif isinstance(a, np.ndarray):
        dt = _float_dtype(a.dtype, what)
        if not a.flags.writeable:
            raise ValueError("%s is read-only" % what)
    else:
        raise TypeError("%s must be a numpy.ndarray or a gpukern.Array, not %s" % (what, type(a).__name__))
    if dt != dtype:
        raise TypeError("%s is %s but the operands are %s" % (what, dt, dtype))
    if a.shape != shape:
        raise ValueError("%s has shape %s, expected %s" % (what, a.shape, shape))
    return a


def _same_dtype(operands, names):
    dt = operands[0].dtype
    for a, name in zip(operands[1:], names[1:]):
        if a.dtype != dt:
            raise TypeError("%s is %s but %s is %s" % (names[0], dt, name, a.dtype))
    return dt


def _matrix(a, what):
    if len(a.shape) != 2:
        raise ValueError("%s must be 2-D, got shape %s" % (what, a.shape))
    return a.shape


def _writes_in_place(dst, dtype, inputs, alias_ok):
    """Whether the C call may write the ndarray dst directly, rather than a copy written back."""
    if dst.dtype != dtype or not dst.flags.c_contiguous:
        return False
    for a in inputs:
        if type(a) is np.ndarray and np.may_share_memory(a, dst):
            # An element-wise op may write over its own input, element for element; any other
            # overlap would read elements the call has already written.
            if not (alias_ok and a.ctypes.data == dst.ctypes.data and a.size == dst.size):
                return False
    return True


_NO_OUTPUT = object()


class Context:
    """A libgpukern context: one backend ("cpu" or "cuda") and its device.

    Use it from several threads if you like: calls on one Context are serialized by a lock,
    as the C library requires; distinct Contexts run concurrently.
    """

    def __init__(self, backend="auto", device=0):
        if backend not in _BACKENDS:
            raise ValueError("backend must be one of %s, not %r" % (sorted(_BACKENDS), backend))
        device = operator.index(device)
        if device < 0:
            raise ValueError("device must be >= 0, got %d" % device)
        self._h = None
        # Reentrant: a garbage collection that runs inside a locked call may free an Array
        # of this context on the same thread.
        self._lock = threading.RLock()
        # Buffers whose Array died while another thread held the lock; freed at the next
        # allocation or at close(), so a finalizer never waits for a lock.
        self._pending = []
        opts = _lib.ContextOptions()
        LIB.gk_context_options_init(byref(opts))
        opts.backend = _BACKENDS[backend]
        opts.device = device
        h = c_void_p()
        status = LIB.gk_context_create_ex(byref(opts), byref(h))
        if status:
            raise _error(status)
        self._h = h
        self._backend = _BACKEND_NAMES[LIB.gk_context_backend(h)]
        self._device_name = LIB.gk_context_device_name(h).decode("utf-8", "replace")

    @property
    def backend(self):
        """"cpu" or "cuda": what the context runs on (what "auto" chose)."""
        return self._backend

    @property
    def device_name(self):
        return self._device_name

    @property
    def last_backend(self):
        """The backend that ran the last operation (None before any)."""
        with self._lock:
            return _BACKEND_NAMES.get(LIB.gk_context_last_backend(self._live()))

    def synchronize(self):
        """Waits for the queued work of the context (CUDA ops on Arrays are asynchronous)."""
        with self._lock:
            status = LIB.gk_context_synchronize(self._live())
            if status:
                raise _error(status)

    def calibrate(self):
        """Measures the cost model by which "auto" places calls on host data (seconds; waits).

        Only a context holding both backends has anything to measure; the result is cached per
        device for later contexts. Needs libgpukern >= 1.1.
        """
        fn = getattr(LIB, "gk_context_calibrate", None)
        if fn is None:
            raise NotImplementedError("libgpukern %s lacks gk_context_calibrate (1.1)" % _lib_version())
        with self._lock:
            status = fn(self._live(), 0)
            if status:
                raise _error(status)

    def close(self):
        """Drops the context; Arrays made by it stay readable until they die themselves."""
        with self._lock:
            self._free_pending()
            if self._h is not None:
                LIB.gk_context_destroy(self._h)
                self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_h", None) is not None:
            self.close()

    def __repr__(self):
        state = "" if self._h is not None else " closed"
        return "<gpukern.Context backend=%r device=%r%s>" % (self._backend, self._device_name, state)

    # -- memory -----------------------------------------------------------------------------

    def _live(self):
        h = self._h
        if h is None:
            raise ValueError("operation on a closed gpukern.Context")
        return h

    def _free_pending(self):
        pending = self._pending
        while pending:
            _gk_buffer_destroy(pending.pop())

    def _alloc(self, shape, size, dtype):
        """A new uninitialized Array; the caller holds the lock and has checked the context."""
        if self._pending:
            self._free_pending()
        h = c_void_p()
        status = _gk_buffer_create(self._h, _GK_DTYPE[dtype], size, byref(h))
        if status:
            raise _error(status)
        return _new_array(h, self, shape, dtype, size)

    def _wrap(self, host, temps):
        """A temporary buffer over a C-contiguous ndarray, recorded in temps for release."""
        h = c_void_p()
        status = _gk_buffer_wrap_host(self._h, _GK_DTYPE[host.dtype], host.size, _address(host), byref(h))
        if status:
            raise _error(status)
        temps.append(h)
        return h

    def empty(self, shape, dtype=np.float32):
        """A new uninitialized Array, e.g. for out=."""
        shape = _shape(shape)
        dtype = _float_dtype(dtype, "dtype")
        with self._lock:
            self._live()
            return self._alloc(shape, math.prod(shape), dtype)

    def asarray(self, a, dtype=None):
        """`a` (an ndarray or anything numpy.asarray takes) copied into the context's memory."""
        if type(a) is Array:
            if a._ctx is self and (dtype is None or _float_dtype(dtype, "dtype") is a._dtype):
                return a
            a = a.get()
        host = np.asarray(a)
        dtype = _float_dtype(host.dtype if dtype is None else dtype, "asarray")
        host = np.asarray(host, dtype=dtype, order="C")
        with self._lock:
            self._live()
            arr = self._alloc(host.shape, host.size, dtype)
            status = _gk_buffer_write(arr._h, 0, host.size, _address(host))
            if status:
                raise _error(status)
        return arr

    # -- the general call path ------------------------------------------------------------------

    def _call(self, invoke, inputs, shape, dtype, out=None, *, alias_ok=False, reads_out=False):
        """Runs invoke(ctx, input handles, output handle) and returns the output.

        inputs are what _operand returns. out is None (a new result: an Array if any input is
        one, else an ndarray), a checked target Array or ndarray (written, and read first if
        reads_out), or _NO_OUTPUT. Host ndarrays are wrapped for the call only; a target
        ndarray that cannot be written in place gets a contiguous copy written back after.
        """
        temps = []
        back = None
        with self._lock:
            ch = self._live()
            try:
                handles = [a._h if type(a) is Array else self._wrap(a, temps) for a in inputs]
                if out is _NO_OUTPUT:
                    result = oh = None
                elif out is None:
                    if any(type(a) is Array for a in inputs):
                        result = self._alloc(shape, math.prod(shape), dtype)
                        oh = result._h
                    else:
                        result = np.empty(shape, dtype)
                        oh = self._wrap(result, temps)
                elif type(out) is Array:
                    result = out
                    oh = out._h
                else:
                    result = out
                    if _writes_in_place(out, dtype, inputs, alias_ok):
                        oh = self._wrap(out, temps)
                    else:
                        back = np.array(out, dtype=dtype, order="C") if reads_out else np.empty(shape, dtype)
                        oh = self._wrap(back, temps)
                status = invoke(ch, handles, oh)
                if status:
                    raise _error(status)
            finally:
                for h in temps:
                    _gk_buffer_destroy(h)
        if back is not None:
            result[...] = back
        return result

    def _elementwise(self, fn, x, y, out):
        if type(x) is Array and type(y) is Array and (out is None or type(out) is Array):
            # The lean path for device data: one C call (two without out=), no host staging.
            shape = x._shape
            if y._shape != shape:
                raise ValueError("x has shape %s but y has shape %s" % (shape, y._shape))
            dtype = x._dtype
            if y._dtype is not dtype:
                raise TypeError("x is %s but y is %s" % (dtype, y._dtype))
            if out is not None:
                _target(out, shape, dtype, "out")
            with self._lock:
                ch = self._live()
                z = self._alloc(shape, x._size, dtype) if out is None else out
                status = fn(ch, x._h, y._h, z._h)
                if status:
                    raise _error(status)
            return z
        x = _operand(x, "x")
        y = _operand(y, "y")
        dtype = _same_dtype((x, y), ("x", "y"))
        if x.shape != y.shape:
            raise ValueError("x has shape %s but y has shape %s" % (x.shape, y.shape))
        if out is not None:
            out = _target(out, x.shape, dtype, "out")
        return self._call(lambda c, h, o: fn(c, h[0], h[1], o), (x, y), x.shape, dtype, out, alias_ok=True)

    # -- element-wise -----------------------------------------------------------------------------

    def add(self, x, y, out=None):
        """x + y."""
        return self._elementwise(_gk_add, x, y, out)

    def sub(self, x, y, out=None):
        """x - y."""
        return self._elementwise(_gk_sub, x, y, out)

    def mul(self, x, y, out=None):
        """x * y, element-wise."""
        return self._elementwise(_gk_mul, x, y, out)

    def exp(self, x, out=None):
        """exp(x), element-wise."""
        x = _operand(x, "x")
        dtype = x.dtype
        if out is not None:
            out = _target(out, x.shape, dtype, "out")
        return self._call(lambda c, h, o: _gk_exp(c, h[0], o), (x,), x.shape, dtype, out, alias_ok=True)

    def axpy(self, alpha, x, y):
        """y += alpha * x, in place (y an Array or a writable ndarray); returns y."""
        x = _operand(x, "x")
        y = _target(y, x.shape, x.dtype, "y")
        alpha = float(alpha)
        return self._call(
            lambda c, h, o: _gk_axpy(c, alpha, h[0], o), (x,), x.shape, x.dtype, y, alias_ok=True, reads_out=True
        )

    def scale(self, alpha, x):
        """x *= alpha, in place (x an Array or a writable ndarray); returns x."""
        if type(x) is not Array and not isinstance(x, np.ndarray):
            raise TypeError("x must be a numpy.ndarray or a gpukern.Array, not %s" % type(x).__name__)
        dtype = x.dtype if type(x) is Array else _float_dtype(x.dtype, "x")
        x = _target(x, x.shape, dtype, "x")
        alpha = float(alpha)
        return self._call(lambda c, h, o: _gk_scale(c, alpha, o), (), x.shape, dtype, x, reads_out=True)

    # -- reductions ----------------------------------------------------------------------------

    def _reduce(self, fn, operands):
        result = c_double()
        self._call(lambda c, h, o: fn(c, *h, byref(result)), operands, None, None, _NO_OUTPUT)
        return result.value

    def sum(self, x):
        """The sum of all elements, as a Python float (float32 data is summed in double)."""
        return self._reduce(_gk_sum, (_operand(x, "x"),))

    def nrm2(self, x):
        """sqrt(sum(x**2)) over all elements, without overflow or underflow, as a float."""
        return self._reduce(_gk_nrm2, (_operand(x, "x"),))

    def dot(self, x, y):
        """sum(x * y) over all elements of two equally shaped operands, as a float."""
        x = _operand(x, "x")
        y = _operand(y, "y")
        _same_dtype((x, y), ("x", "y"))
        if x.shape != y.shape:
            raise ValueError("x has shape %s but y has shape %s" % (x.shape, y.shape))
        return self._reduce(_gk_dot, (x, y))

    # -- matrix multiplication -------------------------------------------------------------------

    def gemm(self, a, b, c=None, alpha=1.0, beta=0.0, trans_a=False, trans_b=False):
        """alpha * op(a) @ op(b) + beta * c, op = transpose if trans_*.

        With c given, the result is written into c (an Array or a writable ndarray), which is
        returned; without, a new result is returned and beta does not matter.
        """
        a = _operand(a, "a")
        b = _operand(b, "b")
        dtype = _same_dtype((a, b), ("a", "b"))
        ra, ca = _matrix(a, "a")
        rb, cb = _matrix(b, "b")
        m, k = (ca, ra) if trans_a else (ra, ca)
        kb, n = (cb, rb) if trans_b else (rb, cb)
        if k != kb:
            raise ValueError("op(a) is %d x %d but op(b) is %d x %d" % (m, k, kb, n))
        ta = 1 if trans_a else 0
        tb = 1 if trans_b else 0
        alpha = float(alpha)
        beta = float(beta) if c is not None else 0.0
        if c is not None:
            c = _target(c, (m, n), dtype, "c")

        def invoke(ch, h, o):
            return _gk_gemm(ch, ta, tb, m, n, k, alpha, h[0], ca, h[1], cb, beta, o, n)

        return self._call(invoke, (a, b), (m, n), dtype, c, reads_out=beta != 0.0)

    def matmul(self, a, b, out=None):
        """a @ b for 1-D or 2-D operands, with NumPy's rules for vectors (vector @ vector is 0-d)."""
        a = _operand(a, "a")
        b = _operand(b, "b")
        dtype = _same_dtype((a, b), ("a", "b"))
        if not (1 <= len(a.shape) <= 2 and 1 <= len(b.shape) <= 2):
            raise ValueError("matmul takes 1-D or 2-D operands, got shapes %s and %s" % (a.shape, b.shape))
        # A vector is a 1 x k row on the left and a k x 1 column on the right; the result drops
        # the dimension that was added, as in numpy.matmul.
        m, k = a.shape if len(a.shape) == 2 else (1, a.shape[0])
        kb, n = b.shape if len(b.shape) == 2 else (b.shape[0], 1)
        if k != kb:
            raise ValueError("matmul: shapes %s and %s do not align" % (a.shape, b.shape))
        shape = (m,) * (len(a.shape) - 1) + (n,) * (len(b.shape) - 1)
        if out is not None:
            out = _target(out, shape, dtype, "out")
        lda = k
        ldb = n

        def invoke(ch, h, o):
            return _gk_gemm(ch, 0, 0, m, n, k, 1.0, h[0], lda, h[1], ldb, 0.0, o, n)

        return self._call(invoke, (a, b), shape, dtype, out)

    # -- Gaussian kernels -------------------------------------------------------------------------

    def rbf_rows(self, a, b, gamma, out=None):
        """k[i] = exp(-gamma * ||a[i] - b[i]||^2) for two n x d operands; k has n elements."""
        a = _operand(a, "a")
        b = _operand(b, "b")
        dtype = _same_dtype((a, b), ("a", "b"))
        n, d = _matrix(a, "a")
        if b.shape != a.shape:
            raise ValueError("a has shape %s but b has shape %s" % (a.shape, b.shape))
        if out is not None:
            out = _target(out, (n,), dtype, "out")
        gamma = float(gamma)
        return self._call(lambda c, h, o: _gk_rbf_rows(c, n, d, gamma, h[0], h[1], o), (a, b), (n,), dtype, out)

    def rbf_matrix(self, x, y, gamma, out=None):
        """k[i, j] = exp(-gamma * ||x[i] - y[j]||^2) for x m x d and y n x d; k is m x n."""
        x = _operand(x, "x")
        y = _operand(y, "y")
        dtype = _same_dtype((x, y), ("x", "y"))
        m, d = _matrix(x, "x")
        n, dy = _matrix(y, "y")
        if dy != d:
            raise ValueError("x has %d features per row but y has %d" % (d, dy))
        if out is not None:
            out = _target(out, (m, n), dtype, "out")
        gamma = float(gamma)
        return self._call(
            lambda c, h, o: _gk_rbf_matrix(c, m, n, d, gamma, h[0], h[1], o), (x, y), (m, n), dtype, out
        )

    def rbf_matvec(self, x, y, w, gamma, out=None):
        """rbf_matrix(x, y, gamma) @ w without forming the matrix; the result has m elements."""
        x = _operand(x, "x")
        y = _operand(y, "y")
        w = _operand(w, "w")
        dtype = _same_dtype((x, y, w), ("x", "y", "w"))
        m, d = _matrix(x, "x")
        n, dy = _matrix(y, "y")
        if dy != d:
            raise ValueError("x has %d features per row but y has %d" % (d, dy))
        if w.shape != (n,):
            raise ValueError("w has shape %s, expected (%d,) (one weight per row of y)" % (w.shape, n))
        if out is not None:
            out = _target(out, (m,), dtype, "out")
        gamma = float(gamma)
        return self._call(
            lambda c, h, o: _gk_rbf_matvec(c, m, n, d, gamma, h[0], h[1], h[2], o), (x, y, w), (m,), dtype, out
        )

    # -- random numbers ----------------------------------------------------------------------------

    def _random(self, invoke, shape, dtype, out):
        shape = _shape(shape)
        dtype = _float_dtype(dtype, "dtype")
        if out is None:
            # No input says where the result should live: it lives with the context.
            with self._lock:
                self._live()
                out = self._alloc(shape, math.prod(shape), dtype)
        else:
            out = _target(out, shape, dtype, "out")
        return self._call(invoke, (), shape, dtype, out)

    def uniform(self, shape, seed, offset=0, dtype=np.float32, out=None):
        """Uniform values in [0, 1): element i is Philox value offset + i of `seed`.

        Returns a new Array (or fills and returns out); the stream is the same on every backend.
        """
        seed = _u64(seed, "seed")
        offset = _u64(offset, "offset")
        return self._random(lambda c, h, o: _gk_rng_uniform(c, seed, offset, o), shape, dtype, out)

    def normal(self, shape, seed, offset=0, mean=0.0, std=1.0, dtype=np.float32, out=None):
        """Normal values mean + std * z (Box-Muller over the uniform stream); see uniform."""
        seed = _u64(seed, "seed")
        offset = _u64(offset, "offset")
        mean = float(mean)
        std = float(std)
        return self._random(lambda c, h, o: _gk_rng_normal(c, seed, offset, mean, std, o), shape, dtype, out)
