# SPDX-License-Identifier: MIT
"""gpukern.Array: an n-dimensional array in the memory of a Context's backend.

It behaves as NumPy and CuPy arrays do as far as the C API reaches: arithmetic with Arrays of
the same shape and with scalars, NumPy's ufuncs that the library computes, @ through gemm (a
2-D .T is a transposed operand, not a copy), reductions with axis/keepdims, views where an index
selects one contiguous run (copies otherwise), and zero-copy export through DLPack and the array
interfaces. What no C call computes (max, abs, other exponents) NumPy computes over the Array's
memory (a CPU context) or a host copy (CUDA); what cannot be done raises an error that names
the alternative.
"""

import math
import numbers
import operator
from ctypes import addressof, byref, c_double, c_void_p

import numpy as np

from . import _dlpack
from ._base import (
    _F64,
    _FAST_FN,
    _GK_DTYPE,
    _address,
    _c_order,
    _check_size,
    _error,
    _fast_new,
    _fast_scalar,
    _float_dtype,
    _gk_add,
    _gk_buffer_data,
    _gk_buffer_destroy,
    _gk_buffer_read,
    _gk_buffer_view,
    _gk_buffer_write,
    _gk_context_stream,
    _gk_copy,
    _gk_div,
    _gk_fill,
    _gk_mul,
    _gk_scale,
    _gk_sub,
    _lib_version,
    _refuse_masked,
)

# IndexError and ValueError both, as NumPy raises for a bad axis (numpy.exceptions from 1.25).
_AxisError = getattr(np, "exceptions", np).AxisError

_ALTERNATIVES = (
    "do it on the host (numpy.asarray(a) gives the values) or with torch/cupy on the same "
    "memory (torch.from_dlpack(a), cupy.from_dlpack(a): no copy), then ctx.asarray(result)"
)
_NO_COMPARE = (
    "gpukern.Array has no comparisons: the C API has no element-wise comparison, and an array "
    "is not one truth value; compare values on the host, e.g. numpy.array_equal(numpy.asarray(a), "
    "numpy.asarray(b)), or " + _ALTERNATIVES
)


# Where an empty Array's interface says its elements are (never read): an address, since NumPy
# before 2.0 takes data 0 as none and refuses the interface; 8-byte aligned, for float64 too.
_EMPTY = c_double()
_EMPTY_ADDRESS = addressof(_EMPTY)


class _Strided(Exception):
    """An index selects more than one contiguous run of elements (Array._locate)."""


def _new_array(h, ctx, shape, dtype, size):
    """An Array over the buffer handle h, which it owns from now on."""
    a = Array.__new__(Array)
    a._h = h
    a._ctx = ctx
    a._shape = shape
    a._dtype = dtype
    a._size = size
    a._t = False
    return a


def _is_scalar(x):
    return isinstance(x, numbers.Real) and not isinstance(x, Array)


def _broadcast_error(a, b):
    return ValueError(
        "shapes %s and %s differ: gpukern broadcasts only Python scalars (the C API's element-wise "
        "ops take equal element counts); expand the operand first, e.g. "
        "ctx.asarray(numpy.broadcast_to(b, %s)), or %s" % (a, b, a, _ALTERNATIVES)
    )


def _pair_error(x, y):
    """Why two Arrays cannot be combined element-wise, or None if they can."""
    if y._shape != x._shape:
        return _broadcast_error(x._shape, y._shape)
    if y._dtype is not x._dtype:
        return TypeError(
            "the operands are %s and %s: gpukern does not promote; convert one with "
            ".astype(numpy.%s)" % (x._dtype, y._dtype, _F64.name)
        )
    if y._t is not x._t:
        return ValueError(
            "one operand is a transposed view (.T) and the other is not: their elements are in "
            "different orders, which the element-wise C calls cannot pair; use .T only as an "
            "operand of @ / matmul / gemm, or make a row-major copy: ctx.asarray(numpy.asarray(a.T))"
        )
    return None


def _operator(fn, op):
    """Array.__add__ and its kin: C's fn straight away for an Array of the same shape, dtype and
    order (the lean path: two C calls, or one through the C extension, nothing checked twice; issue 14
    wants <= 10 us a call, issue 36 <= 2 us)."""

    def method(self, other):
        if type(other) is Array and other._shape == self._shape and other._dtype is self._dtype and other._t is self._t:
            ctx = self._ctx
            with ctx._lock:
                ch = ctx._h
                if ch is None:
                    ctx._live()
                fast = _FAST_FN.get(id(fn))
                if fast is not None:
                    # The C extension: the result's buffer and the op in one call.
                    if ctx._pending:
                        ctx._free_pending()
                    h = _fast_new(ch.value, fast, _GK_DTYPE[self._dtype], self._size, self._h.value, other._h.value)
                    if h < 0:
                        raise _error(-h)
                    z = _new_array(c_void_p(h), ctx, self._shape, self._dtype, self._size)
                else:
                    z = ctx._alloc(self._shape, self._size, self._dtype)
                    status = fn(ch, self._h, other._h, z._h)
                    if status:
                        raise _error(status)
            if self._t:
                z._t = True
            return z
        return self._binary(other, op, False)

    method.__name__ = "__%s__" % op
    method.__qualname__ = "Array." + method.__name__
    return method


class Array:
    """An n-dimensional float32/float64 array in the memory of a Context's backend (or int64:
    Context.kneighbors' indices, which can be read, copied and shared but not computed with).

    Made by Context.asarray, Context.empty, gpukern.from_dlpack and operations. It keeps its
    Context alive; get() (or numpy.asarray) copies it to a new ndarray, and on a CPU context
    numpy.asarray(a) is a view of the same memory.
    """

    # _t: a 2-D transposed view (elements stored as the row-major shape[::-1]); _keep: the owner
    # of memory gpukern did not allocate (a DLPack tensor, an ndarray), shared by its views;
    # _origin: the foreign array an op's out= wraps, which the op returns.
    __slots__ = ("_h", "_ctx", "_shape", "_dtype", "_size", "_t", "_keep", "_seed", "_origin", "__weakref__")

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        """NumPy's ufuncs that the library computes, on the context of the first Array operand:
        add, subtract, multiply, divide, exp, matmul, negative, positive, square, power (by
        the exponents __pow__ takes on the device), absolute (as __abs__), each with out=;
        ndarray + Array lands here too. Others raise TypeError naming the ufunc."""
        name = ufunc.__name__
        if method != "__call__" or kwargs:
            what = "numpy.%s.%s" % (name, method) if method != "__call__" else "numpy.%s with %s=" % (
                name, "=, ".join(sorted(kwargs)))
            raise TypeError("gpukern.Array does not support %s; call numpy.%s(a, b[, out=]) or use "
                            "the Array's methods (a.sum(axis=...) for numpy.add.reduce), or %s"
                            % (what, name, _ALTERNATIVES))
        if out is not None:
            if len(out) != 1:
                raise TypeError("numpy.%s: one out= operand, not %d" % (name, len(out)))
            out = out[0]
        ctx = next(a for a in (*inputs, out) if type(a) is Array)._ctx
        fn = _UFUNCS.get(name)
        if fn is None:
            raise TypeError("gpukern.Array does not support numpy.%s: it takes numpy.%s; %s"
                            % (name, ", numpy.".join(sorted(_UFUNCS)), _ALTERNATIVES))
        return fn(ctx, inputs, out)

    def __init__(self):
        raise TypeError("gpukern.Array is made by Context.asarray, Context.empty, gpukern.from_dlpack or an operation")

    # -- attributes ------------------------------------------------------------------------------

    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    @property
    def size(self):
        return self._size

    @property
    def ndim(self):
        return len(self._shape)

    @property
    def itemsize(self):
        return self._dtype.itemsize

    @property
    def nbytes(self):
        return self._size * self._dtype.itemsize

    @property
    def strides(self):
        """Bytes between neighbours along each axis, as ndarray.strides."""
        return tuple(s * self._dtype.itemsize for s in self._element_strides())

    @property
    def context(self):
        return self._ctx

    @property
    def device(self):
        """Where the memory is: "cpu" or "cuda:N"."""
        ctx = self._ctx
        return "cpu" if ctx._backend == "cpu" else "cuda:%d" % ctx._device

    @property
    def seed(self):
        """The seed that Context.uniform / normal drew the values with (None for other Arrays)."""
        return getattr(self, "_seed", None)

    @property
    def T(self):
        """The transpose, sharing memory: a 2-D result is a transposed operand of @ and gemm."""
        shape = self._shape
        if len(shape) < 2:
            return self
        if len(shape) > 2:
            raise ValueError(
                "a.T of a %d-D Array would need strided memory, which the C API cannot address; "
                "transpose on the host: ctx.asarray(numpy.asarray(a).T)" % len(shape)
            )
        r, c = shape
        v = self._view(0, (c, r), self._size)
        # A matrix with a single row or column has the same element order either way.
        v._t = r > 1 and c > 1 and not self._t
        return v

    def _element_strides(self):
        shape = self._shape
        if self._t:
            return (1, shape[0])
        strides = []
        step = 1
        for n in reversed(shape):
            strides.append(step)
            step *= n
        return tuple(reversed(strides))

    # -- memory ----------------------------------------------------------------------------------

    def _view(self, offset, shape, count):
        """A new Array sharing count elements from offset (gk_buffer_view)."""
        h = c_void_p()
        status = _gk_buffer_view(self._h, offset, count, byref(h))
        if status:
            raise _error(status)
        v = _new_array(h, self._ctx, shape, self._dtype, count)
        keep = getattr(self, "_keep", None)
        if keep is not None:
            v._keep = keep
        return v

    def _data(self):
        if _gk_buffer_data is None:
            raise BufferError("libgpukern %s predates gk_buffer_data (1.2): its memory cannot be "
                              "shared; use get() for a copy" % _lib_version())
        return _gk_buffer_data(self._h) or 0

    def get(self):
        """A new ndarray with the contents (waits for queued work on CUDA)."""
        stored = self._shape[::-1] if self._t else self._shape
        host = np.empty(stored, self._dtype)
        with self._ctx._lock:
            status = _gk_buffer_read(self._h, 0, self._size, _address(host))
            if status:
                raise _error(status)
        return host.T if self._t else host

    def copy(self):
        """A new Array with the same values, in new memory of the same context."""
        ctx = self._ctx
        with ctx._lock:
            ch = ctx._live()
            z = ctx._alloc(self._shape, self._size, self._dtype)
            status = _gk_copy(ch, self._h, z._h)
            if status:
                raise _error(status)
        z._t = self._t
        return z

    __copy__ = copy

    def __deepcopy__(self, memo):
        return self.copy()

    def __reduce__(self):
        raise TypeError("a gpukern.Array cannot be pickled: its memory belongs to a live Context; "
                        "pickle a.get() (an ndarray) and ctx.asarray it back")

    def astype(self, dtype, copy=True):
        """The values as float32 or float64 (converted through the host: the C API has no cast)."""
        dt = _float_dtype(dtype, "astype's dtype")
        if dt is self._dtype:
            return self.copy() if copy else self
        return self._ctx.asarray(self.get().astype(dt))

    def reshape(self, *shape, order="C"):
        """A view with another shape (one dimension may be -1), as ndarray.reshape of C-order data."""
        if order != "C":
            raise ValueError("reshape: gpukern stores row-major (order='C') data only, not order=%r" % (order,))
        if len(shape) == 1 and not isinstance(shape[0], numbers.Integral):
            shape = shape[0]
        shape = tuple(operator.index(s) for s in shape)
        unknown = [i for i, s in enumerate(shape) if s == -1]
        if len(unknown) > 1 or any(s < -1 for s in shape):
            raise ValueError("reshape: bad shape %s (one dimension may be -1, none other negative)" % (shape,))
        known = math.prod(s for s in shape if s != -1)
        if unknown:
            if known == 0 or self._size % known:
                raise ValueError("cannot reshape array of size %d into shape %s" % (self._size, shape))
            shape = shape[: unknown[0]] + (self._size // known,) + shape[unknown[0] + 1:]
        if math.prod(shape) != self._size:
            raise ValueError("cannot reshape array of size %d into shape %s" % (self._size, shape))
        _check_size(shape, self._dtype.itemsize, "reshape: shape")
        if self._t:
            raise ValueError(
                "reshape of a transposed view: its elements are not in row-major order, and the C API "
                "cannot reorder them; reshape the original, or copy through the host: "
                "ctx.asarray(numpy.asarray(a).reshape(%s))" % (shape,)
            )
        return self._view(0, shape, self._size)

    def ravel(self):
        """A 1-D view (of row-major data)."""
        return self.reshape(-1)

    def flatten(self):
        """A 1-D copy."""
        return self.reshape(-1).copy()

    # -- reductions and products -----------------------------------------------------------------

    def _axes(self, axis):
        """axis (None, an int or a tuple of ints) as a sorted tuple of distinct axes, as NumPy."""
        nd = len(self._shape)
        if axis is None:
            return tuple(range(nd))
        axes = axis if isinstance(axis, tuple) else (axis,)
        out = []
        for a in axes:
            a = operator.index(a)
            if not -nd <= a < nd:
                raise _AxisError(a, nd)
            a %= nd
            if a in out:
                raise ValueError("duplicate value in 'axis'")
            out.append(a)
        return tuple(sorted(out))

    def _kept(self, axes, keepdims):
        """The shape of a reduction over axes."""
        if keepdims:
            return tuple(1 if i in axes else n for i, n in enumerate(self._shape))
        return tuple(n for i, n in enumerate(self._shape) if i not in axes)

    def _on_host(self, name, axis, keepdims, **kwargs):
        """numpy.<name> of the values: on a CPU context over the Array's own memory (no copy),
        on CUDA over a copy on the host (the C API has no such reduction); an array result
        comes back as an Array of the context, a scalar as a NumPy scalar."""
        kwargs = {k: v for k, v in kwargs.items() if v is not None}
        if keepdims:
            kwargs["keepdims"] = True
        r = getattr(np, name)(np.asarray(self), axis=axis, **kwargs)
        if isinstance(r, np.ndarray) and r.ndim:
            return self._ctx.asarray(r)
        return r[()] if isinstance(r, np.ndarray) else r

    @staticmethod
    def _no_out(name, out, dtype=None):
        if out is not None:
            raise TypeError("Array.%s: out= is not supported; use the result" % name)
        if dtype is not None:
            raise TypeError("Array.%s: dtype= is not supported; convert first with .astype(dtype)" % name)

    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        """The sum over all elements (a NumPy scalar of the dtype; float32 data is summed in
        double) or over axes (an Array): on the device where the axes are leading or trailing
        (a product with a vector of ones), else as _on_host says."""
        if axis is None and out is None and dtype is None and not keepdims:
            return self._dtype.type(self._ctx.sum(self))
        self._no_out("sum", out, dtype)
        axes = self._axes(axis)
        shape = self._shape
        nd = len(shape)
        if len(axes) == nd:
            total = self._dtype.type(self._ctx.sum(self))
            if not keepdims:
                return total
            r = self._ctx.empty((1,) * nd, self._dtype)
            r.fill(total)
            return r
        if not axes:
            return self.copy()
        leading = axes == tuple(range(len(axes)))
        trailing = axes == tuple(range(nd - len(axes), nd))
        if self._t or not (leading or trailing):
            if nd == 2:  # a transposed matrix: one axis of two is leading or trailing
                m = self
            else:
                return self._on_host("sum", axes, keepdims)
        else:
            k = math.prod(shape[i] for i in axes)
            rest = math.prod(n for i, n in enumerate(shape) if i not in axes)
            m = self.reshape(k, rest) if leading else self.reshape(rest, k)
        ctx = self._ctx
        lead = axes[0] == 0
        ones = ctx.empty(m._shape[0] if lead else m._shape[1], self._dtype)
        ones.fill(1.0)
        r = ctx.matmul(ones, m) if lead else ctx.matmul(m, ones)
        kept = self._kept(axes, keepdims)
        return r if r._shape == kept else r.reshape(kept)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        """The mean: sum / count on the device (a NumPy scalar over all elements, else an Array)."""
        self._no_out("mean", out, dtype)
        axes = self._axes(axis)
        count = math.prod(self._shape[i] for i in axes)
        total = self.sum(axes, keepdims=keepdims)
        if type(total) is not Array:
            with np.errstate(invalid="ignore", divide="ignore"):
                return self._dtype.type(total / self._dtype.type(count))
        return total / count

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        """The variance, as numpy.var: over all elements on the device (two passes: the mean, then
        the sum of squared deviations), over axes as _on_host says."""
        self._no_out("var", out, dtype)
        axes = self._axes(axis)
        if len(axes) != len(self._shape) or keepdims or self._t:
            return self._on_host("var", axis, keepdims, ddof=ddof)
        dev = self - self.mean()
        with np.errstate(invalid="ignore", divide="ignore"):
            return self._dtype.type(np.float64(self._ctx.dot(dev, dev)) / max(self._size - ddof, 0))

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        """The standard deviation, sqrt(var): see var."""
        v = self.var(axis, dtype, out, ddof, keepdims)
        return np.sqrt(v) if type(v) is not Array else self._ctx.asarray(np.sqrt(np.asarray(v)))

    def prod(self, axis=None, dtype=None, out=None, keepdims=False):
        """The product (no C call computes one): as _on_host says."""
        self._no_out("prod", out, dtype)
        return self._on_host("prod", axis, keepdims)

    def max(self, axis=None, out=None, keepdims=False):
        """The largest element (no C call computes it): as _on_host says."""
        self._no_out("max", out)
        return self._on_host("max", axis, keepdims)

    def min(self, axis=None, out=None, keepdims=False):
        """The smallest element (no C call computes it): as _on_host says."""
        self._no_out("min", out)
        return self._on_host("min", axis, keepdims)

    def argmax(self, axis=None, out=None, keepdims=False):
        """The index of the largest element (an int64 NumPy scalar, or an int64 ndarray along
        an axis: gpukern has no integer Arrays), computed as _on_host says."""
        self._no_out("argmax", out)
        return self._arg("argmax", axis, keepdims)

    def argmin(self, axis=None, out=None, keepdims=False):
        """The index of the smallest element: see argmax."""
        self._no_out("argmin", out)
        return self._arg("argmin", axis, keepdims)

    def _arg(self, name, axis, keepdims):
        kwargs = {"keepdims": True} if keepdims else {}
        return getattr(np, name)(np.asarray(self), axis=axis, **kwargs)

    def dot(self, other):
        """Inner product of two 1-D operands (a NumPy scalar), else matmul, as ndarray.dot."""
        if len(self._shape) == 1 and len(getattr(other, "shape", ())) == 1:
            return self._dtype.type(self._ctx.dot(self, other))
        return self._ctx.matmul(self, other)

    def norm(self):
        """The Euclidean (Frobenius) norm of all elements, as a NumPy scalar of the dtype."""
        return self._dtype.type(self._ctx.nrm2(self))

    def fill(self, value):
        """Sets every element to value, in place."""
        ctx = self._ctx
        with ctx._lock:
            status = _gk_fill(ctx._live(), float(value), self._h)
            if status:
                raise _error(status)

    def __matmul__(self, other):
        if _is_scalar(other):
            raise ValueError("matmul: a scalar operand is not allowed, use * instead")
        return self._ctx.matmul(self, other)

    def __rmatmul__(self, other):
        if _is_scalar(other):
            raise ValueError("matmul: a scalar operand is not allowed, use * instead")
        return self._ctx.matmul(other, self)

    # -- arithmetic ------------------------------------------------------------------------------

    __add__ = _operator(_gk_add, "add")
    __sub__ = _operator(_gk_sub, "sub")
    __mul__ = _operator(_gk_mul, "mul")
    __truediv__ = _operator(_gk_div, "div")

    def __radd__(self, other):
        return self._binary(other, "add", True)

    def __rsub__(self, other):
        return self._binary(other, "sub", True)

    def __rmul__(self, other):
        return self._binary(other, "mul", True)

    def __rtruediv__(self, other):
        return self._binary(other, "div", True)

    def __iadd__(self, other):
        return self._binary(other, "add", False, self)

    def __isub__(self, other):
        return self._binary(other, "sub", False, self)

    def __imul__(self, other):
        return self._binary(other, "mul", False, self)

    def __itruediv__(self, other):
        return self._binary(other, "div", False, self)

    def __neg__(self):
        z = self.copy()
        ctx = self._ctx
        with ctx._lock:
            status = _gk_scale(ctx._live(), -1.0, z._h)
            if status:
                raise _error(status)
        return z

    def __pos__(self):
        return self.copy()

    def __abs__(self):
        """|a|: no C call computes it, so NumPy does, over the Array's memory on a CPU context
        (no copy) or a copy on the host on CUDA; the result is a new Array."""
        return self._ctx.asarray(np.abs(np.asarray(self)))

    def __pow__(self, other):
        """a ** p: on the device for p = 2 (a * a), 1, 0 and -1 (1 / a), NumPy's results bit for
        bit; other exponents and Array exponents through NumPy as __abs__ does."""
        if _is_scalar(other):
            p = float(other)
            if p == 2:
                return self * self
            if p == 1:
                return self.copy()
            if p == 0:
                z = self._like()
                z.fill(1.0)
                return z
            if p == -1:
                return self._binary(1.0, "div", True)
        return self._ctx.asarray(np.power(np.asarray(self), _host_operand(other, self._dtype)))

    def __rpow__(self, other):
        return self._ctx.asarray(np.power(_host_operand(other, self._dtype), np.asarray(self)))

    def _like(self):
        """A new uninitialized Array of this shape, dtype and order."""
        ctx = self._ctx
        with ctx._lock:
            ctx._live()
            z = ctx._alloc(self._shape, self._size, self._dtype)
        z._t = self._t
        return z

    def _binary(self, other, op, reflected, out=None):
        """self (op) other, or other (op) self if reflected; written into out (self) if given."""
        if type(other) is float or type(other) is int or _is_scalar(other):  # before the ABC check
            return self._scalar(float(other), op, reflected, out)
        if isinstance(other, (list, tuple)):
            raise TypeError("gpukern.Array %s a %s: make it an array first, ctx.asarray(...)"
                            % (op, type(other).__name__))
        if type(other) is Array:
            error = _pair_error(self, other)
            if error is not None:
                raise error
        elif not (isinstance(other, np.ndarray) or hasattr(other, "__dlpack__")
                  or hasattr(other, "__cuda_array_interface__") or hasattr(other, "__array_interface__")):
            return NotImplemented
        x, y = (other, self) if reflected else (self, other)
        fn = getattr(self._ctx, op)
        return fn(x, y) if out is None else fn(x, y, out=out)

    def _scalar(self, s, op, reflected, out):
        """self (op) s through fill / copy / scale: NumPy's result for a scalar rounded to the dtype."""
        ctx = self._ctx
        fn = _gk_add if op == "add" else _gk_sub if op == "sub" else _gk_div if op == "div" else _gk_scale
        fast = _FAST_FN.get(id(fn)) if out is None else None
        with ctx._lock:
            ch = ctx._live()
            if fast is not None:
                # The C extension: create, copy or fill, and the op in one call.
                if ctx._pending:
                    ctx._free_pending()
                mul = op == "mul"
                h = _fast_scalar(ch.value, _FAST_FN[id(_gk_copy if mul else _gk_fill)], fast,
                                 _GK_DTYPE[self._dtype], self._size, self._h.value, s,
                                 0 if mul else 2 if reflected else 1)
                if h < 0:
                    raise _error(-h)
                z = _new_array(c_void_p(h), ctx, self._shape, self._dtype, self._size)
                if self._t:
                    z._t = True
                return z
            z = out if out is not None else ctx._alloc(self._shape, self._size, self._dtype)
            if op == "mul":
                status = 0 if z is self else _gk_copy(ch, self._h, z._h)
                status = status or _gk_scale(ch, s, z._h)
            else:
                # z = s, then z = x (op) z or z (op) x: one rounding, as NumPy's (a division too,
                # which a product with the reciprocal would not give).
                t = ctx._alloc(self._shape, self._size, self._dtype) if z is self else z
                status = _gk_fill(ch, s, t._h)
                if not status:
                    a, b = (t, self) if reflected else (self, t)
                    status = fn(ch, a._h, b._h, z._h)
            if status:
                raise _error(status)
        if self._t:
            z._t = True
        return z

    # Comparisons are not defined: one bool would be wrong, and there is no element-wise C call.
    def _no_compare(self, other):
        raise TypeError(_NO_COMPARE)

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _no_compare
    __hash__ = None

    # -- Python protocols ------------------------------------------------------------------------

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of unsized object")
        return self._shape[0]

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d array")
        if len(self._shape) == 1:
            return iter(self.get())
        return (self[i] for i in range(self._shape[0]))

    def _item(self):
        if self._size != 1:
            raise ValueError("only arrays of one element can be converted to Python scalars "
                             "(this one has shape %s)" % (self._shape,))
        return self.get().reshape(())[()]

    def __bool__(self):
        if self._size != 1:
            raise ValueError("the truth value of an array with %d elements is ambiguous" % self._size)
        return bool(self._item())

    def __float__(self):
        return float(self._item())

    def __int__(self):
        return int(self._item())

    def item(self):
        """The one element as a Python float (an int for k-NN's int64 indices)."""
        return self._item().item()

    def tolist(self):
        return self.get().tolist()

    # -- indexing --------------------------------------------------------------------------------

    def _locate(self, key):
        """(offset, shape) of the one contiguous run of elements that a basic index selects
        (integers, step-1 slices, None, ...); _Strided where the selection is not one run."""
        shape = self._shape
        if not isinstance(key, tuple):
            key = (key,)
        for k in key:
            if not (k is None or k is Ellipsis or isinstance(k, slice)
                    or (isinstance(k, numbers.Integral) and not isinstance(k, (bool, np.bool_)))):
                raise _Strided()  # fancy (array or boolean) indices: NumPy's, on a copy
        ellipses = [i for i, k in enumerate(key) if k is Ellipsis]
        if len(ellipses) > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        used = sum(1 for k in key if k is not None and k is not Ellipsis)
        if used > len(shape):
            raise IndexError("too many indices for array: array is %d-dimensional, but %d were indexed"
                             % (len(shape), used))
        if ellipses:
            i = ellipses[0]
            key = key[:i] + (slice(None),) * (len(shape) - used) + key[i + 1:]
        if self._t:
            if all(k is None or k == slice(None) for k in key):
                if any(k is None for k in key):
                    raise _Strided()
                return 0, shape
            raise _Strided()
        strides = self._element_strides()
        offset = 0
        out = []
        spread = False  # a kept axis longer than 1 has been seen: later axes must be whole
        axis = 0
        for k in key:
            if k is None:
                out.append(1)
                continue
            n = shape[axis]
            if isinstance(k, slice):
                start, stop, step = k.indices(n)
                length = len(range(start, stop, step))
                if (step != 1 and length > 1) or (spread and length != n):
                    raise _Strided()
                offset += start * strides[axis] if length else 0
                out.append(length)
                spread = spread or length > 1
            else:
                i = operator.index(k)
                if i < 0:
                    i += n
                if not 0 <= i < n:
                    raise IndexError("index %d is out of bounds for axis %d with size %d" % (k, axis, n))
                if spread and n > 1:
                    raise _Strided()
                offset += i * strides[axis]
            axis += 1
        return offset, tuple(out) + shape[axis:]

    def __getitem__(self, key):
        try:
            offset, shape = self._locate(key)
        except _Strided:
            # Not one contiguous run: NumPy's selection, as a copy (the C API addresses runs).
            r = np.asarray(self)[key]
            return r[()] if r.ndim == 0 else self._ctx.asarray(r, copy=True)
        if not shape and key is not Ellipsis:
            value = np.empty(1, self._dtype)
            with self._ctx._lock:
                status = _gk_buffer_read(self._h, offset, 1, _address(value))
                if status:
                    raise _error(status)
            return value[0]
        count = math.prod(shape)
        if self._t:
            v = self._view(0, self._shape, self._size)
            v._t = True
            return v
        return self._view(offset if count else 0, shape, count)

    def __setitem__(self, key, value):
        try:
            if self._t:
                raise _Strided()
            offset, shape = self._locate(key)
        except _Strided:
            self._set_strided(key, value)
            return
        count = math.prod(shape)
        ctx = self._ctx
        if _is_scalar(value):
            with ctx._lock:
                ch = ctx._live()
                target = self._view(offset if count else 0, shape, count)
                status = _gk_fill(ch, float(value), target._h)
                if status:
                    raise _error(status)
            return
        if type(value) is Array:
            if value._shape != shape:
                raise _broadcast_error(shape, value._shape)
            if value._dtype is not self._dtype or value._t:
                raise _pair_error(self._view(offset, shape, count), value)
            with ctx._lock:
                ch = ctx._live()
                target = self._view(offset if count else 0, shape, count)
                status = _gk_copy(ch, value._h, target._h)
                if status:
                    raise _error(status)
            return
        _refuse_masked(value, "the assigned value")
        host = np.asarray(value)
        if host.dtype.kind not in "fiub":
            raise TypeError("cannot assign a %s into a gpukern.Array" % (host.dtype,))
        host = _c_order(np.broadcast_to(host, shape), self._dtype)
        if not count:
            return
        with ctx._lock:
            status = _gk_buffer_write(self._h, offset, count, _address(host))
            if status:
                raise _error(status)

    def _set_strided(self, key, value):
        """a[key] = value where key is not one contiguous run: through NumPy over the Array's
        memory on a CPU context, through a copy of the whole Array on the host on CUDA."""
        _refuse_masked(value, "the assigned value")
        host_value = np.asarray(value)
        if host_value.dtype.kind not in "fiub":
            raise TypeError("cannot assign a %s into a gpukern.Array" % (host_value.dtype,))
        ctx = self._ctx
        with ctx._lock:
            ctx._live()
            if ctx._backend == "cpu":
                np.asarray(self)[key] = host_value
                return
        host = self.get()
        host[key] = host_value
        stored = host.T if self._t else host
        with ctx._lock:
            status = _gk_buffer_write(self._h, 0, self._size, _address(stored))
            if status:
                raise _error(status)

    # -- interop: NumPy, the CUDA array interface, DLPack ----------------------------------------

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError(
                "a gpukern.Array in CUDA memory cannot be an ndarray without a copy; share it with "
                "torch.from_dlpack(a) or cupy.from_dlpack(a) instead (an Array of a CPU context is "
                "an ndarray without a copy: numpy.asarray(a))"
            )
        host = self.get()
        return host if dtype is None else host.astype(dtype, copy=False)

    def _interface(self, ptr):
        if not ptr and not self._size:
            ptr = _EMPTY_ADDRESS
        strides = None if not self._t else tuple(s * self._dtype.itemsize for s in self._element_strides())
        return {"shape": self._shape, "typestr": self._dtype.str, "data": (ptr, False),
                "strides": strides, "version": 3}

    @property
    def __array_interface__(self):
        """NumPy's array interface, for Arrays of a CPU context: numpy.asarray(a) shares memory."""
        if self._ctx._backend != "cpu":
            raise AttributeError("a gpukern.Array in CUDA memory has no __array_interface__ "
                                 "(it has __cuda_array_interface__ and __dlpack__)")
        if _gk_buffer_data is None:
            raise AttributeError("libgpukern %s predates gk_buffer_data (1.2)" % _lib_version())
        return self._interface(self._data())

    @property
    def __cuda_array_interface__(self):
        """The CUDA array interface (version 3) of an Array in CUDA memory, with its stream."""
        ctx = self._ctx
        if ctx._backend != "cuda":
            raise AttributeError("a gpukern.Array of a CPU context has no __cuda_array_interface__ "
                                 "(it has __array_interface__ and __dlpack__)")
        if _gk_buffer_data is None:
            raise AttributeError("libgpukern %s predates gk_buffer_data (1.2)" % _lib_version())
        d = self._interface(self._data())
        # Consumers order their work after the context's queued work on this stream.
        d["stream"] = _gk_context_stream(ctx._live()) or 1
        return d

    def __dlpack_device__(self):
        ctx = self._ctx
        if ctx._backend == "cpu":
            return (_dlpack.KDL_CPU, 0)
        return (_dlpack.KDL_CUDA, ctx._device)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule over the Array's memory: versioned (DLPack 1.0) if max_version allows.

        stream is the consumer's CUDA stream (None: the legacy default stream; -1: none): its
        later work is ordered after the context's queued work, on the device, without waiting.
        """
        device = self.__dlpack_device__()
        if dl_device is not None and tuple(dl_device) != device:
            raise BufferError("a gpukern.Array on %s cannot be exported to %s without a copy "
                              "between devices" % (_dlpack.device_name(*device), _dlpack.device_name(*dl_device)))
        src = self.copy() if copy else self
        if device[0] == _dlpack.KDL_CUDA:
            if stream == 0:
                raise BufferError("__dlpack__(stream=0) is ambiguous for CUDA: pass 1 for the legacy "
                                  "default stream, 2 for the per-thread one")
            if stream != -1:
                self._ctx._join_stream(1 if stream is None else stream)
        elif stream is not None:
            raise BufferError("__dlpack__(stream=%r) on a CPU Array: CPU memory has no streams" % (stream,))
        versioned = max_version is not None and max_version[0] >= 1
        code = _dlpack.KDL_INT if src._dtype.kind == "i" else _dlpack.KDL_FLOAT
        return _dlpack.export(src, src._data(), device, src._dtype.itemsize * 8, src._shape,
                              src._element_strides(), versioned, code)

    # -- printing and lifetime -------------------------------------------------------------------

    def __repr__(self):
        host = self.get()
        prefix = "gpukern.Array("
        body = np.array2string(host, separator=", ", prefix=prefix)
        # NumPy names the shape where the values do not show it (empty or summarized arrays).
        shape = ", shape=%s" % (self._shape,) if "shape=" in np.array_repr(host) else ""
        return "%s%s%s, dtype=%s, device=%r)" % (prefix, body, shape, self._dtype.name, self.device)

    def __str__(self):
        return str(self.get())

    def __del__(self, _destroy=_gk_buffer_destroy):
        # Bound as a default: module globals may be gone when this runs at interpreter exit.
        h = getattr(self, "_h", None)
        if h is None:
            return
        ctx = self._ctx
        lock = ctx._lock
        if lock.acquire(False):
            try:
                _destroy(h)
            finally:
                lock.release()
        else:
            ctx._pending.append(h)


def _host_operand(x, dtype):
    """An operand of a computation NumPy does for an Array (** by other exponents): a scalar as
    the Array's dtype, an array as an ndarray of that dtype (gpukern does not promote)."""
    if _is_scalar(x):
        return dtype.type(x)
    host = np.asarray(x)
    if host.dtype != dtype:
        raise TypeError("the operands are %s and %s: gpukern does not promote; convert one with "
                        ".astype(numpy.%s)" % (dtype, host.dtype, _F64.name))
    return host


def _as_array(ctx, x):
    return x if type(x) is Array else ctx.asarray(x)


def _store(out, r):
    """r written into out (an Array or ndarray) and out returned; r itself without out."""
    if out is None:
        return r
    if type(out) is Array:
        out[...] = r
    else:
        out[...] = np.asarray(r)
    return out


def _ufunc_binary(op):
    def call(ctx, inputs, out):
        x, y = inputs
        if _is_scalar(x) or _is_scalar(y):
            reflected = _is_scalar(x)
            a, s = (y, x) if reflected else (x, y)
            return _store(out, _as_array(ctx, a)._binary(s, op, reflected))
        return getattr(ctx, op)(x, y, out=out)

    return call


def _ufunc_unary(method):
    def call(ctx, inputs, out):
        return _store(out, method(_as_array(ctx, inputs[0]), *inputs[1:]))

    return call


# The ufuncs that __array_ufunc__ takes, by name (NumPy < 2 names division "true_divide").
_UFUNCS = {
    "add": _ufunc_binary("add"),
    "subtract": _ufunc_binary("sub"),
    "multiply": _ufunc_binary("mul"),
    "divide": _ufunc_binary("div"),
    "true_divide": _ufunc_binary("div"),
    "exp": lambda ctx, inputs, out: ctx.exp(inputs[0], out=out),
    "matmul": lambda ctx, inputs, out: ctx.matmul(inputs[0], inputs[1], out=out),
    "square": lambda ctx, inputs, out: ctx.mul(inputs[0], inputs[0], out=out),
    "negative": _ufunc_unary(Array.__neg__),
    "positive": _ufunc_unary(Array.__pos__),
    "absolute": _ufunc_unary(Array.__abs__),
    "power": lambda ctx, inputs, out: _store(
        out, _as_array(ctx, inputs[0]) ** inputs[1] if type(inputs[0]) is Array or _is_scalar(inputs[1])
        else Array.__rpow__(inputs[1], inputs[0])),
}
