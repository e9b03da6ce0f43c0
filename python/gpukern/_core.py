# SPDX-License-Identifier: MIT
"""Contexts and their operations: the argument checks and the call path around the C calls."""

import math
import numbers
import operator
import os
import threading
from ctypes import byref, c_double, c_void_p

import numpy as np

from . import _dlpack, _interop, _lib, _params
from ._array import Array, _new_array
from ._base import (
    _BACKEND_NAMES,
    _BACKENDS,
    _F32,
    _F64,
    _FAST_FN,
    _GK_DTYPE,
    _I64,
    LIB,
    LIBRARY_PATH,
    GpukernError,
    InvalidParameterError,
    Status,
    _address,
    _error,
    _c_order,
    _fast_call,
    _fast_new,
    _float_dtype,
    _gk_add,
    _gk_axpy,
    _gk_backend_available,
    _gk_buffer_create,
    _gk_buffer_destroy,
    _gk_buffer_wrap_host,
    _gk_buffer_write,
    _gk_context_set_stream,
    _gk_context_stream,
    _gk_div,
    _gk_distance_matrix,
    _gk_dot,
    _gk_exp,
    _gk_gemm,
    _gk_kernel_matmul,
    _gk_kernel_matrix,
    _gk_knn,
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
    _refuse_masked,
    _shape,
    _u64,
)

__all__ = ["Array", "Context", "GpukernError", "InvalidParameterError", "LIBRARY_PATH", "Status",
           "available_backends", "device_count", "from_dlpack", "kneighbors", "pairwise_distances",
           "pairwise_kernels"]


def available_backends():
    """Names of the backends usable on this machine, e.g. ["cpu"] or ["cpu", "cuda"]."""
    return [name for code, name in sorted(_BACKEND_NAMES.items()) if _gk_backend_available(code)]


def device_count(backend="cuda"):
    """How many devices a backend has here: the usable CUDA GPUs (0 when none; CUDA_VISIBLE_DEVICES
    applies), 1 for "cpu", and for "auto" the count of the backend an "auto" Context runs on.

    Context(backend, device=...) takes ordinals below it. Needs libgpukern >= 1.2.
    """
    if backend not in _BACKENDS:
        raise ValueError("backend must be one of %s, not %r" % (sorted(_BACKENDS), backend))
    fn = getattr(LIB, "gk_device_count", None)
    if fn is None:
        raise NotImplementedError("libgpukern %s lacks gk_device_count (1.2)" % _lib_version())
    return fn(_BACKENDS[backend])


_TRANSPOSED = (
    "%s is a transposed view (.T): its elements are not in row-major order; transposed operands "
    "are taken by @ / matmul / gemm and by element-wise ops on operands all transposed alike; "
    "pass the original, or a row-major copy (tensor.contiguous(), ctx.asarray(numpy.asarray(x)))"
)


def _operand(a, what, ctx, t_ok=False):
    """An input as an Array or a C-contiguous native-float ndarray (copied once if need be).

    Other libraries' arrays (DLPack, __cuda_array_interface__) become Arrays over their memory
    where the context computes, host ones on a CUDA context ndarrays; a transposed view is
    refused unless t_ok.
    """
    if type(a) is not Array:
        if isinstance(a, np.ndarray):
            if type(a) is not np.ndarray:
                _refuse_masked(a, what)
            dt = a.dtype
            if dt is not _F32 and dt is not _F64:
                dt = _float_dtype(dt, what)
            return _c_order(a, dt)
        if isinstance(a, (list, tuple)):
            # Array-likes, as scikit-learn takes them: NumPy's conversion, then the dtype rule.
            return _operand(np.asarray(a), what, ctx)
        try:
            a = _interop.convert(ctx, a, what, host_ok=True, read_only_ok=True)
        except _interop.NeedsCopy:
            # A strided or unaligned host tensor is copied, as such an ndarray is; device memory
            # is not (the C API has no strided copy).
            if ctx._backend != "cpu":
                raise
            return ctx.asarray(np.ascontiguousarray(_interop.host_array(a)), copy=True)
        if type(a) is np.ndarray:
            return _operand(a, what, ctx)
    if a._t and not t_ok:
        raise ValueError(_TRANSPOSED % what)
    return a


def _target(ctx, a, shape, dtype, what, t=False):
    """Checks an operand the call writes (out=, axpy's y, scale's x, gemm's c)."""
    if type(a) is Array:
        dt = a._dtype
        if a._t is not t:
            raise ValueError(_TRANSPOSED % what if a._t else "%s is not transposed like the operands" % what)
    elif isinstance(a, np.ndarray):
        _refuse_masked(a, what)
        dt = _float_dtype(a.dtype, what)
        if not a.flags.writeable:
            raise ValueError("%s is read-only" % what)
    else:
        wrapped = _interop.convert(ctx, a, what, host_ok=False, read_only_ok=False)
        wrapped._origin = a
        return _target(ctx, wrapped, shape, dtype, what, t)
    if dt != dtype:
        raise TypeError("%s is %s but the operands are %s" % (what, dt, dtype))
    if a.shape != shape:
        raise ValueError("%s has shape %s, expected %s" % (what, a.shape, shape))
    return a


def _transposed(operands, names):
    """Whether the Array operands of an element-wise op are all transposed views (all or none)."""
    flags = [type(a) is Array and a._t for a in operands]
    if any(flags) and not all(flags):
        raise ValueError(_TRANSPOSED % names[flags.index(True)])
    return flags[0]


def _same_dtype(operands, names):
    dt = operands[0].dtype
    for a, name in zip(operands[1:], names[1:]):
        if a.dtype != dt:
            raise TypeError("%s is %s but %s is %s: gpukern does not promote; convert one first "
                            "(.astype(numpy.float64))" % (names[0], dt, name, a.dtype))
    return dt


def _same_shape(x, y, names=("x", "y")):
    if x.shape != y.shape:
        raise ValueError(
            "%s has shape %s but %s has shape %s: gpukern does not broadcast (only Python scalars, "
            "with Array operators); expand it first, e.g. numpy.broadcast_to"
            % (names[0], x.shape, names[1], y.shape)
        )


def _dims(shape, what):
    if len(shape) != 2:
        raise ValueError("%s must be 2-D, got shape %s" % (what, shape))
    return shape


def _matrix(a, what):
    return _dims(a.shape, what)


def _pair(x, y):
    """(dtype, m, n, d) of x m x d and y n x d, one dtype."""
    dtype = _same_dtype((x, y), ("x", "y"))
    m, d = _matrix(x, "x")
    n, dy = _matrix(y, "y")
    if dy != d:
        raise ValueError("x has %d features per row but y has %d" % (d, dy))
    return dtype, m, n, d


def _gemm_operand(a, what, ctx):
    """(operand, logical shape, stored transposed) of a matmul/gemm input, without copies.

    A transposed Array, and a Fortran-ordered 2-D ndarray (the transpose of a C-ordered one),
    are passed to gemm as transposed operands.
    """
    if isinstance(a, np.ndarray) and a.ndim == 2 and a.flags.f_contiguous and not a.flags.c_contiguous:
        return _operand(a.T, what, ctx), a.shape, True
    a = _operand(a, what, ctx, t_ok=True)
    return a, a.shape, type(a) is Array and a._t


def _writes_in_place(dst, dtype, inputs, alias_ok):
    """Whether the C call may write the ndarray dst directly, rather than a copy written back."""
    flags = dst.flags
    if dst.dtype != dtype or not (flags.c_contiguous and flags.aligned):
        return False
    for a in inputs:
        if type(a) is np.ndarray and np.may_share_memory(a, dst):
            # An element-wise op may write over its own input, element for element; any other
            # overlap would read elements the call has already written.
            if not (alias_ok and a.ctypes.data == dst.ctypes.data and a.size == dst.size):
                return False
    return True


def _gamma(gamma, d, x=None, caller="rbf"):
    """gamma validated as scikit-learn validates it (a finite real >= 0, None, "scale" or "auto"),
    as a float: None and "auto" are 1 / n_features, "scale" 1 / (n_features * x.var()) (SVC's)
    when x is given; else InvalidParameterError, a ValueError and a TypeError as scikit-learn's."""
    if gamma is None or (gamma == "auto" if isinstance(gamma, str) else False):
        return 1.0 / d if d else 1.0
    if isinstance(gamma, str) and gamma == "scale" and x is not None:
        var = float(x.var()) if np.size(x) else 0.0
        return 1.0 / (d * var) if d and var != 0 else 1.0
    if isinstance(gamma, numbers.Real) and not isinstance(gamma, (bool, np.bool_)) and 0 <= gamma < math.inf:
        return float(gamma) + 0.0  # -0.0 as 0.0: ranks compare gamma's bits (issue 31, item 16)
    accepted = "None, 'scale' or 'auto'" if x is not None else "None or 'auto'"
    raise InvalidParameterError("The 'gamma' parameter of %s must be a float in the range [0.0, inf), "
                                "%s. Got %r instead." % (caller, accepted, gamma))


def _seed(seed):
    """seed, or a fresh one from the OS when None."""
    if seed is None:
        return int.from_bytes(os.urandom(8), "little")
    return _u64(seed, "seed")


def _stream_handle(stream):
    """A CUDA stream as its integer handle: an int, torch.cuda.Stream (.cuda_stream) or CuPy's
    (.ptr). A stream object of handle 0 is torch's or CuPy's default stream, the legacy default
    stream, whose handle for the C library is 1 (cudaStreamLegacy): 0 there means the context's
    own stream, which the default stream would not be ordered with."""
    for attr in ("cuda_stream", "ptr"):
        value = getattr(stream, attr, None)
        if value is not None:
            return operator.index(value) or 1
    return operator.index(stream)


_NO_OUTPUT = object()
_default_contexts = {}
_default_lock = threading.Lock()


def _default_context(obj):
    """The shared Context for where obj lives (from_dlpack without ctx)."""
    if not hasattr(obj, "__dlpack_device__"):
        if hasattr(obj, "__cuda_array_interface__"):
            raise ValueError("from_dlpack(%s): its device is not known (no __dlpack_device__); "
                             "pass ctx=" % type(obj).__name__)
        key = ("cpu", 0)
    else:
        device_type, device_id = obj.__dlpack_device__()
        if device_type in (_dlpack.KDL_CPU, _dlpack.KDL_CUDA_HOST):
            key = ("cpu", 0)
        elif device_type == _dlpack.KDL_CUDA:
            key = ("cuda", device_id)
        else:
            raise ValueError("from_dlpack: %s is on %s; gpukern computes on the CPU and CUDA GPUs"
                             % (type(obj).__name__, _dlpack.device_name(device_type, device_id)))
    with _default_lock:
        ctx = _default_contexts.get(key)
        if ctx is None:
            ctx = _default_contexts[key] = Context(key[0], key[1])
        return ctx


def from_dlpack(obj, ctx=None):
    """An Array over obj's memory, without a copy: any object exporting DLPack or the CUDA array
    interface (torch.Tensor, cupy.ndarray, numpy.ndarray, gpukern.Array).

    ctx: the Context to compute with, which must be where obj lives (other devices raise
    ValueError); None takes a shared Context of obj's device. The producer's queued work is
    ordered before the context's later work on the device.
    """
    if type(obj) is Array and (ctx is None or obj._ctx is ctx):
        return obj
    if ctx is None:
        ctx = _default_context(obj)
    return _interop.convert(ctx, obj, "from_dlpack's argument", host_ok=False, read_only_ok=False)


def _context_of(operands):
    """The Context the module-level functions compute with: that of the first Array operand,
    else the shared one of the first CUDA operand's device, else a shared "auto" Context."""
    for a in operands:
        if type(a) is Array:
            return a._ctx
    for a in operands:
        if isinstance(a, np.ndarray) or not hasattr(a, "__dlpack_device__"):
            continue
        if a.__dlpack_device__()[0] == _dlpack.KDL_CUDA:
            return _default_context(a)
    with _default_lock:
        ctx = _default_contexts.get("auto")
        if ctx is None:
            ctx = _default_contexts["auto"] = Context("auto")
        return ctx


def pairwise_kernels(x, y=None, metric="rbf", gamma=None, degree=3, coef0=1, nu=1.5, out=None):
    """Context.pairwise_kernels on the operands' Context (a shared "auto" one for host data)."""
    return _context_of((x, y, out)).pairwise_kernels(x, y, metric, gamma, degree, coef0, nu, out)


def pairwise_distances(x, y=None, metric="euclidean", out=None):
    """Context.pairwise_distances on the operands' Context (a shared "auto" one for host data)."""
    return _context_of((x, y, out)).pairwise_distances(x, y, metric, out)


def kneighbors(x, y, k, metric="euclidean"):
    """Context.kneighbors on the operands' Context (a shared "auto" one for host data)."""
    return _context_of((x, y)).kneighbors(x, y, k, metric)


_NO_COPY = (
    "a gpukern.Context cannot be %s: it owns a C context (a device, its streams and memory); "
    "share the one you have (it is safe across threads), or make another with "
    "gpukern.Context(backend, device, ...); to move data, pickle or copy numpy.asarray(a) or a.get()"
)


def _int32(value, what, least):
    """value as an int in [least, 2**31 - 1] (a gk_context_options field), else TypeError/ValueError."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError("%s must be an integer, not %r" % (what, value))
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError("%s must be an integer, not %s" % (what, type(value).__name__)) from None
    if not least <= value <= 2**31 - 1:
        raise ValueError("%s must be in [%d, 2**31 - 1], got %d" % (what, least, value))
    return value


class Context:
    """A libgpukern context: one backend ("cpu" or "cuda") and its device.

    Use it from several threads if you like: calls on one Context are serialized by a lock,
    as the C library requires; distinct Contexts run concurrently.
    """

    def __init__(self, backend="auto", device=0, cpu_threads=None, allow_tf32=False):
        """backend: "auto" (CUDA when usable, else the CPU), "cpu" or "cuda"; device: the CUDA
        device ordinal (gpukern.device_count() says how many); cpu_threads: threads for CPU ops
        (None: OpenMP's default); allow_tf32: float32 gemm may use TF32 tensor cores on CUDA
        (about 1e-3 relative error instead of float32's rounding)."""
        if backend not in _BACKENDS:
            raise ValueError("backend must be one of %s, not %r" % (sorted(_BACKENDS), backend))
        device = _int32(device, "device", 0)
        threads = 0 if cpu_threads is None else _int32(cpu_threads, "cpu_threads", 1)
        if not isinstance(allow_tf32, (bool, np.bool_)):
            raise TypeError("allow_tf32 must be True or False, not %r" % (allow_tf32,))
        self._h = None
        # Reentrant: a garbage collection that runs inside a locked call may free an Array
        # of this context on the same thread.
        self._lock = threading.RLock()
        # Buffers whose Array died while another thread held the lock; freed at the next
        # allocation or at close(), so a finalizer never waits for a lock.
        self._pending = []
        # Handle slots (each with its byref) that the lean paths reuse under the lock: making
        # the ctypes objects per call costs 0.15 us an operand.
        handles = (c_void_p(), c_void_p(), c_void_p())
        self._slots = tuple(x for h in handles for x in (h, byref(h)))
        opts = _lib.ContextOptions()
        LIB.gk_context_options_init(byref(opts))
        opts.backend = _BACKENDS[backend]
        opts.device = device
        self._device = device
        opts.cpu_threads = threads
        opts.flags = _lib.FLAG_ALLOW_TF32 if allow_tf32 else 0
        h = c_void_p()
        status = LIB.gk_context_create_ex(byref(opts), byref(h))
        if status:
            raise _error(status)
        self._h = h
        self._backend = _BACKEND_NAMES[LIB.gk_context_backend(h)]
        self._device_name = LIB.gk_context_device_name(h).decode("utf-8", "replace")
        self._cpu_threads = cpu_threads if cpu_threads is None else threads
        self._allow_tf32 = bool(allow_tf32)

    @property
    def cpu_threads(self):
        """Threads for CPU ops as asked for (None: OpenMP's default)."""
        return self._cpu_threads

    @property
    def allow_tf32(self):
        """Whether float32 gemm may use TF32 tensor cores (CUDA)."""
        return self._allow_tf32

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

    # A copy would share the C handle, and closing both would destroy it twice: the C API has
    # no reference count to take, so copies and pickles are refused with what to do instead.
    def __copy__(self):
        raise TypeError(_NO_COPY % "copied")

    def __deepcopy__(self, memo):
        raise TypeError(_NO_COPY % "deep-copied")

    def __reduce__(self):
        raise TypeError(_NO_COPY % "pickled")

    def __repr__(self):
        state = "" if self._h is not None else " closed"
        options = "".join(
            [" cpu_threads=%d" % self._cpu_threads if self._cpu_threads is not None else "",
             " allow_tf32=True" if self._allow_tf32 else ""])
        return "<gpukern.Context backend=%r device=%r%s%s>" % (
            self._backend, self._device_name, options, state)

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
        dtype = _float_dtype(dtype, "dtype")
        shape = _shape(shape, dtype)
        with self._lock:
            self._live()
            return self._alloc(shape, math.prod(shape), dtype)

    def zeros(self, shape, dtype=np.float32):
        """A new Array of zeros (gk_fill)."""
        return self.full(shape, 0.0, dtype)

    def ones(self, shape, dtype=np.float32):
        """A new Array of ones (gk_fill)."""
        return self.full(shape, 1.0, dtype)

    def full(self, shape, fill_value, dtype=np.float32):
        """A new Array with every element fill_value (gk_fill)."""
        a = self.empty(shape, dtype)
        a.fill(fill_value)
        return a

    def arange(self, start, stop=None, step=1, dtype=np.float32):
        """numpy.arange(start, stop, step) as an Array: computed on the host, then copied over."""
        dtype = _float_dtype(dtype, "dtype")
        return self.asarray(np.arange(start, stop, step, dtype=dtype), copy=True)

    def empty_like(self, a, dtype=None):
        """A new uninitialized Array of a's shape and (unless given) dtype; a any array."""
        return self.empty(np.shape(a), a.dtype if dtype is None else dtype)

    def zeros_like(self, a, dtype=None):
        return self.full_like(a, 0.0, dtype)

    def ones_like(self, a, dtype=None):
        return self.full_like(a, 1.0, dtype)

    def full_like(self, a, fill_value, dtype=None):
        return self.full(np.shape(a), fill_value, a.dtype if dtype is None else dtype)

    def asarray(self, a, dtype=None, copy=None):
        """`a` as an Array of this context: NumPy arrays, torch/CuPy tensors, anything array-like.

        Without a copy (copy=None, the default) where a lives where the context computes and
        its dtype and layout fit, else copied; copy=True always copies, copy=False raises
        ValueError rather than copy. Host data on a CUDA context is copied to the device.
        """
        want = None if dtype is None else _float_dtype(dtype, "dtype")
        _refuse_masked(a, "asarray's argument")
        if type(a) is not Array and not isinstance(a, np.ndarray) and (
                hasattr(a, "__dlpack__") or hasattr(a, "__cuda_array_interface__")):
            try:
                a = _interop.convert(self, a, "asarray's argument", host_ok=True, read_only_ok=False)
            except BufferError:
                # Read-only memory: an Array over it could be written, so it is copied.
                if copy is False:
                    raise
                a = _interop.convert(self, a, "asarray's argument", host_ok=True, read_only_ok=True)
                if type(a) is Array:
                    a = a.copy()
                copy = None
            except _interop.NeedsCopy:
                # Strided or unaligned host memory is copied through NumPy, as such an ndarray is.
                if copy is False or self._backend != "cpu":
                    raise
                a = _interop.host_array(a)
        if type(a) is Array:
            if a._ctx is self:
                if want is None or want is a._dtype:
                    return a.copy() if copy else a
                if copy is False:
                    raise ValueError("asarray(copy=False): converting %s to %s needs a copy" % (a._dtype, want))
                return a.astype(want)
            if copy is False:
                raise ValueError("asarray(copy=False): an Array of another context needs a copy")
            a = a.get()
        host = np.asarray(a)
        dtype = _float_dtype(host.dtype if want is None else want, "asarray's argument")
        if self._backend == "cpu" and copy is not True and host.dtype == dtype:
            arr = _interop.wrap_ndarray(self, host, "asarray's argument")
            if arr is not None:
                return arr
        if copy is False:
            raise ValueError("asarray(copy=False): this %s (%s) needs a copy on a %s context"
                             % (type(a).__name__, _interop.describe(host), self._backend))
        host = _c_order(host, dtype)
        with self._lock:
            self._live()
            arr = self._alloc(host.shape, host.size, dtype)
            status = _gk_buffer_write(arr._h, 0, host.size, _address(host))
            if status:
                raise _error(status)
        return arr

    # -- streams ---------------------------------------------------------------------------------

    @property
    def stream(self):
        """The CUDA stream the context queues work on, as an integer handle (None on the CPU)."""
        if self._backend != "cuda" or _gk_context_stream is None:
            return None
        with self._lock:
            return _gk_context_stream(self._live())

    def set_stream(self, stream):
        """Queues the context's later work on a CUDA stream: an integer handle, torch.cuda.Stream
        or cupy.cuda.Stream; None returns to the context's own. Work queued before comes first.
        Keep the stream alive while the context uses it.
        """
        if self._backend != "cuda":
            raise ValueError("set_stream: a CPU context has no streams")
        if _gk_context_set_stream is None:
            raise NotImplementedError("libgpukern %s lacks gk_context_set_stream (1.2)" % _lib_version())
        handle = None if stream is None else _stream_handle(stream)
        with self._lock:
            status = _gk_context_set_stream(self._live(), handle)
            if status:
                raise _error(status)
            self._user_stream = (stream, handle)

    def _dlpack_stream(self):
        """The current stream's handle, as DLPack names streams (1: the legacy default)."""
        return _gk_context_stream(self._live()) or 1

    def _join_stream(self, stream):
        """Orders the context's later work after `stream`'s queued work, and that stream's later
        work after the context's: two stream switches, each an event the new stream waits for."""
        if _gk_context_set_stream is None:
            raise NotImplementedError("libgpukern %s lacks gk_context_set_stream (1.2)" % _lib_version())
        with self._lock:
            ch = self._live()
            if stream == _gk_context_stream(ch):
                return
            current = getattr(self, "_user_stream", (None, None))[1]
            status = _gk_context_set_stream(ch, stream)
            if not status:
                status = _gk_context_set_stream(ch, current)
            if status:
                raise _error(status)

    # -- the general call path ------------------------------------------------------------------

    def _call(self, invoke, inputs, shape, dtype, out=None, *, alias_ok=False, reads_out=False, t=False):
        """Runs invoke(ctx, input handles, output handle) and returns the output.

        inputs are what _operand returns. out is None (a new result: an Array if any input is
        one, else an ndarray), a checked target Array or ndarray (written, and read first if
        reads_out), or _NO_OUTPUT. Host ndarrays are wrapped for the call only; a target
        ndarray that cannot be written in place gets a contiguous copy written back after.
        t says the operands are transposed views: a new Array result is one too, and a target
        ndarray is written through its transpose (the order the C call writes).
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
                        result._t = t
                        oh = result._h
                    else:
                        result = np.empty(shape, dtype)
                        oh = self._wrap(result, temps)
                elif type(out) is Array:
                    result = getattr(out, "_origin", out)
                    oh = out._h
                else:
                    result = out
                    # Transposed operands hold their elements in the order of out.T.
                    dst = out.T if t else out
                    if _writes_in_place(dst, dtype, inputs, alias_ok):
                        oh = self._wrap(dst, temps)
                    else:
                        back = np.array(dst, dtype=dtype, order="C") if reads_out else np.empty(dst.shape, dtype)
                        oh = self._wrap(back, temps)
                status = invoke(ch, handles, oh)
                if not status and type(out) is Array and hasattr(out, "_origin"):
                    # Another library's array written in place: its owner reads it on its own
                    # stream, which DLPack gives no way to order after ours, so the op returns
                    # once the result is there (a CUDA Array result stays asynchronous).
                    status = LIB.gk_context_synchronize(ch)
                if status:
                    raise _error(status)
            finally:
                for h in temps:
                    _gk_buffer_destroy(h)
        if back is not None:
            dst[...] = back
        return result

    def _lean(self, fn, inputs, out):
        """fn(ctx, input handles..., output handle) where every operand can be passed as it is,
        else None (the general path then checks, converts and stages): Arrays of one shape,
        dtype and order with out None or such an Array, or plain ndarrays (C-contiguous,
        aligned, float32/float64) of one shape and dtype with out None or such an ndarray
        that the call may write. Nothing is checked twice: issue 36 wants a 16-element op to
        cost <= 2 us on Arrays and <= 3 us on ndarrays."""
        x = inputs[0]
        kind = type(x)
        if kind is Array:
            shape, dtype, t = x._shape, x._dtype, x._t
            for a in inputs:
                if type(a) is not Array or a._shape != shape or a._dtype is not dtype or a._t is not t:
                    return None
            # (Arrays with _origin, over another library's out=, are made by _target, never passed here.)
            if out is not None and (type(out) is not Array or out._shape != shape or out._dtype is not dtype
                                    or out._t is not t):
                return None
            with self._lock:
                ch = self._h
                if ch is None:
                    self._live()
                z = self._alloc(shape, x._size, dtype) if out is None else out
                status = fn(ch, *[a._h for a in inputs], z._h)
                if status:
                    raise _error(status)
            if t and out is None:
                z._t = True
            return z
        if kind is not np.ndarray:
            return None
        dtype = x.dtype
        if dtype is not _F32 and dtype is not _F64:
            return None
        shape = x.shape
        for a in inputs:
            if type(a) is not np.ndarray or a.dtype is not dtype or a.shape != shape:
                return None
            flags = a.flags
            if not (flags.c_contiguous and flags.aligned):
                return None
        if out is None:
            z = np.empty(shape, dtype)
        elif (type(out) is np.ndarray and out.shape == shape and out.flags.writeable
              and _writes_in_place(out, dtype, inputs, True)):
            z = out
        else:
            return None
        code = _GK_DTYPE[dtype]
        n = x.size
        handles = []
        with self._lock:
            ch = self._h
            if ch is None:
                self._live()
            fast = _FAST_FN.get(id(fn))
            if fast is not None:
                # The C extension: wrap, op and release in one call (an out= ndarray too).
                status = _fast_call(ch.value, fast, code, dtype.itemsize, *inputs, z)
                if status:
                    raise _error(status)
                return z
            try:
                for a in (*inputs, z):
                    h = c_void_p()
                    status = _gk_buffer_wrap_host(ch, code, n, _address(a), byref(h))
                    if status:
                        raise _error(status)
                    handles.append(h)
                status = fn(ch, *handles)
                if status:
                    raise _error(status)
            finally:
                for h in handles:
                    _gk_buffer_destroy(h)
        return z

    def _lean_unary(self, fn, x, out=None):
        """_lean for one operand, without its loops: the cheapest path there is for fn(ctx, x,
        result) through ctypes (issue 36's per-call targets), else None. out: None, or an ndarray
        of x's dtype and shape that the call may write in place (an Array out=: _lean's)."""
        kind = type(x)
        if kind is Array:
            if out is not None:
                return self._lean(fn, (x,), out)
            with self._lock:
                ch = self._h
                if ch is None:
                    self._live()
                fast = _FAST_FN.get(id(fn))
                if fast is not None:
                    # The C extension: the result's buffer and the op in one call.
                    if self._pending:
                        self._free_pending()
                    h = _fast_new(ch.value, fast, _GK_DTYPE[x._dtype], x._size, x._h.value)
                    if h < 0:
                        raise _error(-h)
                    z = _new_array(c_void_p(h), self, x._shape, x._dtype, x._size)
                else:
                    z = self._alloc(x._shape, x._size, x._dtype)
                    status = fn(ch, x._h, z._h)
                    if status:
                        raise _error(status)
            if x._t:
                z._t = True
            return z
        if kind is not np.ndarray:
            return None
        dtype = x.dtype
        if dtype is not _F32 and dtype is not _F64:
            return None
        flags = x.flags
        if not (flags.c_contiguous and flags.aligned):
            return None
        if out is None:
            z = np.empty(x.shape, dtype)
        elif (type(out) is np.ndarray and out.dtype is dtype and out.shape == x.shape
              and (out is x or _writes_in_place(out, dtype, (x,), True)) and out.flags.writeable):
            z = out
        else:
            return None
        code = _GK_DTYPE[dtype]
        n = x.size
        lock = self._lock
        lock.acquire()
        try:
            ch = self._h
            if ch is None:
                self._live()
            fast = _FAST_FN.get(id(fn))
            if fast is not None:
                status = _fast_call(ch.value, fast, code, dtype.itemsize, x, z)
                if status:
                    raise _error(status)
                return z
            hx, px, hz, pz = self._slots[:4]
            try:
                status = (_gk_buffer_wrap_host(ch, code, n, _address(x), px)
                          or _gk_buffer_wrap_host(ch, code, n, _address(z), pz)
                          or fn(ch, hx, hz))
                if status:
                    raise _error(status)
            finally:
                _gk_buffer_destroy(hx)
                _gk_buffer_destroy(hz)
                hx.value = hz.value = None
        finally:
            lock.release()
        return z

    def _lean_binary(self, fn, x, y):
        """fn(ctx, x, y, result) for two plain ndarrays of one dtype and shape and no out=, as
        _lean_unary does for one; else None."""
        dtype = x.dtype
        if (dtype is not _F32 and dtype is not _F64) or type(y) is not np.ndarray or y.dtype is not dtype:
            return None
        shape = x.shape
        if y.shape != shape:
            return None
        fx, fy = x.flags, y.flags
        if not (fx.c_contiguous and fx.aligned and fy.c_contiguous and fy.aligned):
            return None
        z = np.empty(shape, dtype)
        code = _GK_DTYPE[dtype]
        n = x.size
        lock = self._lock
        lock.acquire()
        try:
            ch = self._h
            if ch is None:
                self._live()
            fast = _FAST_FN.get(id(fn))
            if fast is not None:
                status = _fast_call(ch.value, fast, code, dtype.itemsize, x, y, z)
                if status:
                    raise _error(status)
                return z
            hx, px, hy, py, hz, pz = self._slots
            try:
                status = (_gk_buffer_wrap_host(ch, code, n, _address(x), px)
                          or _gk_buffer_wrap_host(ch, code, n, _address(y), py)
                          or _gk_buffer_wrap_host(ch, code, n, _address(z), pz)
                          or fn(ch, hx, hy, hz))
                if status:
                    raise _error(status)
            finally:
                _gk_buffer_destroy(hx)
                _gk_buffer_destroy(hy)
                _gk_buffer_destroy(hz)
                hx.value = hy.value = hz.value = None
        finally:
            lock.release()
        return z

    def _elementwise(self, fn, x, y, out):
        z = self._lean_binary(fn, x, y) if out is None and type(x) is np.ndarray else self._lean(fn, (x, y), out)
        if z is not None:
            return z
        x = _operand(x, "x", self, t_ok=True)
        y = _operand(y, "y", self, t_ok=True)
        if out is None and type(x) is Array and type(y) is Array:
            # Foreign operands (torch tensors) are Arrays now: the lean path takes them too.
            z = self._lean(fn, (x, y), None)
            if z is not None:
                return z
        dtype = _same_dtype((x, y), ("x", "y"))
        _same_shape(x, y)
        t = _transposed((x, y), ("x", "y"))
        if out is not None:
            out = _target(self, out, x.shape, dtype, "out", t)
        return self._call(lambda c, h, o: fn(c, h[0], h[1], o), (x, y), x.shape, dtype, out, alias_ok=True, t=t)

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

    def div(self, x, y, out=None):
        """x / y, element-wise: the IEEE quotient, NumPy's bit for bit (x / 0 is +-inf or nan)."""
        return self._elementwise(_gk_div, x, y, out)

    def exp(self, x, out=None):
        """exp(x), element-wise."""
        z = self._lean_unary(_gk_exp, x, out)
        if z is not None:
            return z
        x = _operand(x, "x", self, t_ok=True)
        if out is None and type(x) is Array:
            return self._lean_unary(_gk_exp, x)  # a foreign operand (a torch tensor), now an Array
        dtype = x.dtype
        t = _transposed((x,), ("x",))
        if out is not None:
            out = _target(self, out, x.shape, dtype, "out", t)
        return self._call(lambda c, h, o: _gk_exp(c, h[0], o), (x,), x.shape, dtype, out, alias_ok=True, t=t)

    def axpy(self, alpha, x, y):
        """y += alpha * x, in place (y an Array, a writable ndarray or tensor); returns y."""
        x = _operand(x, "x", self, t_ok=True)
        t = _transposed((x,), ("x",))
        y = _target(self, y, x.shape, x.dtype, "y", t)
        alpha = float(alpha)
        return self._call(
            lambda c, h, o: _gk_axpy(c, alpha, h[0], o), (x,), x.shape, x.dtype, y, alias_ok=True, reads_out=True,
            t=t)

    def scale(self, alpha, x):
        """x *= alpha, in place (x an Array, a writable ndarray or tensor); returns x."""
        if type(x) is Array:
            dtype = x._dtype
            t = x._t
        elif isinstance(x, np.ndarray):
            dtype = _float_dtype(x.dtype, "x")
            t = False
        else:
            wrapped = _interop.convert(self, x, "x", host_ok=False, read_only_ok=False)
            wrapped._origin = x
            x = wrapped
            dtype = x._dtype
            t = x._t
        x = _target(self, x, x.shape, dtype, "x", t)
        alpha = float(alpha)
        return self._call(lambda c, h, o: _gk_scale(c, alpha, o), (), x.shape, dtype, x, reads_out=True)

    # -- reductions ----------------------------------------------------------------------------

    def _reduce(self, fn, operands):
        result = c_double()
        self._call(lambda c, h, o: fn(c, *h, byref(result)), operands, None, None, _NO_OUTPUT)
        return result.value

    def _reduce_array(self, fn, x):
        """fn(ctx, x, &result) for an Array x, without the general path's checks and lists: a
        16-element a.sum() within issue 36's 2 us on Arrays."""
        result = c_double()
        with self._lock:
            ch = self._h
            if ch is None:
                self._live()
            status = fn(ch, x._h, byref(result))
        if status:
            raise _error(status)
        return result.value

    def sum(self, x):
        """The sum of all elements, as a Python float (float32 data is summed in double)."""
        if type(x) is Array:
            return self._reduce_array(_gk_sum, x)
        return self._reduce(_gk_sum, (_operand(x, "x", self, t_ok=True),))

    def nrm2(self, x):
        """sqrt(sum(x**2)) over all elements, without overflow or underflow, as a float."""
        if type(x) is Array:
            return self._reduce_array(_gk_nrm2, x)
        return self._reduce(_gk_nrm2, (_operand(x, "x", self, t_ok=True),))

    def dot(self, x, y):
        """sum(x * y) over all elements of two equally shaped operands, as a float."""
        x = _operand(x, "x", self, t_ok=True)
        y = _operand(y, "y", self, t_ok=True)
        _same_dtype((x, y), ("x", "y"))
        _same_shape(x, y)
        _transposed((x, y), ("x", "y"))
        return self._reduce(_gk_dot, (x, y))

    # -- matrix multiplication -------------------------------------------------------------------

    def gemm(self, a, b, c=None, alpha=1.0, beta=0.0, trans_a=False, trans_b=False):
        """alpha * op(a) @ op(b) + beta * c, op = transpose if trans_*.

        With c given, the result is written into c (an Array, a writable ndarray or tensor),
        which is returned; without, a new result is returned and beta does not matter.
        Transposed views (a.T) are passed as transposed operands, without a copy.
        """
        a, sa, sta = _gemm_operand(a, "a", self)
        b, sb, stb = _gemm_operand(b, "b", self)
        dtype = _same_dtype((a, b), ("a", "b"))
        ra, ca = _dims(sa, "a")
        rb, cb = _dims(sb, "b")
        m, k = (ca, ra) if trans_a else (ra, ca)
        kb, n = (cb, rb) if trans_b else (rb, cb)
        if k != kb:
            raise ValueError("op(a) is %d x %d but op(b) is %d x %d" % (m, k, kb, n))
        # gemm sees the stored (row-major) matrices: a transposed view flips the flag.
        ta = int(bool(trans_a) != sta)
        tb = int(bool(trans_b) != stb)
        lda = ra if sta else ca
        ldb = rb if stb else cb
        alpha = float(alpha)
        beta = float(beta) if c is not None else 0.0
        if c is not None:
            c = _target(self, c, (m, n), dtype, "c")

        def invoke(ch, h, o):
            return _gk_gemm(ch, ta, tb, m, n, k, alpha, h[0], lda, h[1], ldb, beta, o, n)

        return self._call(invoke, (a, b), (m, n), dtype, c, reads_out=beta != 0.0)

    def matmul(self, a, b, out=None):
        """a @ b for 1-D or 2-D operands, with NumPy's rules for vectors (vector @ vector is 0-d).

        Transposed views (a.T) are passed to gemm as transposed operands, without a copy.
        """
        a, sa, ta = _gemm_operand(a, "a", self)
        b, sb, tb = _gemm_operand(b, "b", self)
        dtype = _same_dtype((a, b), ("a", "b"))
        if not (1 <= len(sa) <= 2 and 1 <= len(sb) <= 2):
            raise ValueError("matmul takes 1-D or 2-D operands, got shapes %s and %s" % (sa, sb))
        # A vector is a 1 x k row on the left and a k x 1 column on the right; the result drops
        # the dimension that was added, as in numpy.matmul.
        m, k = sa if len(sa) == 2 else (1, sa[0])
        kb, n = sb if len(sb) == 2 else (sb[0], 1)
        if k != kb:
            raise ValueError("matmul: shapes %s and %s do not align" % (sa, sb))
        shape = (m,) * (len(sa) - 1) + (n,) * (len(sb) - 1)
        if out is not None:
            out = _target(self, out, shape, dtype, "out")
        lda = m if ta else k
        ldb = k if tb else n
        ta = int(ta)
        tb = int(tb)

        def invoke(ch, h, o):
            return _gk_gemm(ch, ta, tb, m, n, k, 1.0, h[0], lda, h[1], ldb, 0.0, o, n)

        return self._call(invoke, (a, b), shape, dtype, out)

    # -- Gaussian kernels -------------------------------------------------------------------------

    def rbf_rows(self, a, b, gamma=None, out=None):
        """k[i] = exp(-gamma * ||a[i] - b[i]||^2) for two n x d operands; k has n elements.

        gamma as rbf_matrix takes it ("scale" over a).
        """
        a = _operand(a, "a", self)
        b = _operand(b, "b", self)
        dtype = _same_dtype((a, b), ("a", "b"))
        n, d = _matrix(a, "a")
        if b.shape != a.shape:
            raise ValueError("a has shape %s but b has shape %s" % (a.shape, b.shape))
        if out is not None:
            out = _target(self, out, (n,), dtype, "out")
        gamma = _gamma(gamma, d, a, "rbf_rows")
        return self._call(lambda c, h, o: _gk_rbf_rows(c, n, d, gamma, h[0], h[1], o), (a, b), (n,), dtype, out)

    def rbf_matrix(self, x, y=None, gamma=None, out=None):
        """k[i, j] = exp(-gamma * ||x[i] - y[j]||^2) for x m x d and y n x d; k is m x n.

        As scikit-learn's rbf_kernel(X, Y=None, gamma=None): y=None is x; gamma=None (or "auto")
        is 1 / d, "scale" is 1 / (d * x.var()) (SVC's); a negative gamma raises
        InvalidParameterError.
        """
        x = _operand(x, "x", self)
        y = x if y is None else _operand(y, "y", self)
        dtype = _same_dtype((x, y), ("x", "y"))
        m, d = _matrix(x, "x")
        n, dy = _matrix(y, "y")
        if dy != d:
            raise ValueError("x has %d features per row but y has %d" % (d, dy))
        if out is not None:
            out = _target(self, out, (m, n), dtype, "out")
        gamma = _gamma(gamma, d, x, "rbf_matrix")
        return self._call(
            lambda c, h, o: _gk_rbf_matrix(c, m, n, d, gamma, h[0], h[1], o), (x, y), (m, n), dtype, out
        )

    def rbf_matvec(self, x, y, w, gamma=None, out=None):
        """rbf_matrix(x, y, gamma) @ w without forming the matrix; the result has m elements.

        y=None is x, and gamma as rbf_matrix takes it ("scale" over x).
        """
        x = _operand(x, "x", self)
        y = x if y is None else _operand(y, "y", self)
        w = _operand(w, "w", self)
        dtype = _same_dtype((x, y, w), ("x", "y", "w"))
        m, d = _matrix(x, "x")
        n, dy = _matrix(y, "y")
        if dy != d:
            raise ValueError("x has %d features per row but y has %d" % (d, dy))
        if w.shape != (n,):
            raise ValueError("w has shape %s, expected (%d,) (one weight per row of y)" % (w.shape, n))
        if out is not None:
            out = _target(self, out, (m,), dtype, "out")
        gamma = _gamma(gamma, d, x, "rbf_matvec")
        return self._call(
            lambda c, h, o: _gk_rbf_matvec(c, m, n, d, gamma, h[0], h[1], h[2], o), (x, y, w), (m,), dtype, out
        )

    # -- the kernel family, distances, k nearest neighbours (1.3) ---------------------------------

    def pairwise_kernels(self, x, y=None, metric="rbf", gamma=None, degree=3, coef0=1, nu=1.5, out=None):
        """k[i, j] = kernel(x[i], y[j]) for x m x d and y n x d (y=None: x); k is m x n.

        As scikit-learn's pairwise_kernels: metric "rbf", "laplacian", "polynomial" ("poly"),
        "sigmoid", "linear", "cosine", and "matern" (GPyTorch's, r = sqrt(gamma) |x - y|, nu
        0.5, 1.5 or 2.5); gamma=None is 1 / d; parameters a kernel does not use are ignored.
        A bad parameter raises InvalidParameterError. NaN and inf propagate to the entries of
        their rows (scikit-learn refuses them).
        """
        x = _operand(x, "x", self)
        y = x if y is None else _operand(y, "y", self)
        dtype, m, n, d = _pair(x, y)
        kern = _params.kernel(metric, gamma, degree, coef0, nu, d, "pairwise_kernels")
        if out is not None:
            out = _target(self, out, (m, n), dtype, "out")
        return self._call(
            lambda c, h, o: _gk_kernel_matrix(c, byref(kern), m, n, d, h[0], h[1], o), (x, y), (m, n), dtype, out
        )

    def pairwise_distances(self, x, y=None, metric="euclidean", out=None):
        """dist[i, j] = metric(x[i], y[j]) for x m x d and y n x d (y=None: x); dist is m x n.

        As scikit-learn's pairwise_distances: metric "euclidean" ("l2"), "sqeuclidean",
        "manhattan" ("l1", "cityblock") or "cosine" (1 - cosine similarity; 1 where a row is
        zero). Each distance is accurate relative to itself: 0 exactly for identical rows.
        """
        code = _params.metric(metric, "pairwise_distances")
        x = _operand(x, "x", self)
        y = x if y is None else _operand(y, "y", self)
        dtype, m, n, d = _pair(x, y)
        if out is not None:
            out = _target(self, out, (m, n), dtype, "out")
        return self._call(
            lambda c, h, o: _gk_distance_matrix(c, code, m, n, d, h[0], h[1], o), (x, y), (m, n), dtype, out
        )

    def kernel_matmul(self, x, y, w, metric="rbf", gamma=None, degree=3, coef0=1, nu=1.5, out=None):
        """pairwise_kernels(x, y, metric, ...) @ w without forming the m x n matrix: w n x r
        (out m x r) or a vector of n weights (out m elements). y=None is x."""
        x = _operand(x, "x", self)
        y = x if y is None else _operand(y, "y", self)
        w = _operand(w, "w", self)
        dtype, m, n, d = _pair(x, y)
        _same_dtype((x, w), ("x", "w"))
        if len(w.shape) not in (1, 2) or w.shape[0] != n:
            raise ValueError("w has shape %s, expected (%d,) or (%d, r): a row of weights per row of y"
                             % (w.shape, n, n))
        r = w.shape[1] if len(w.shape) == 2 else 1
        shape = (m, r) if len(w.shape) == 2 else (m,)
        kern = _params.kernel(metric, gamma, degree, coef0, nu, d, "kernel_matmul")
        if out is not None:
            out = _target(self, out, shape, dtype, "out")
        return self._call(
            lambda c, h, o: _gk_kernel_matmul(c, byref(kern), m, n, d, r, h[0], h[1], h[2], o), (x, y, w), shape,
            dtype, out
        )

    def kneighbors(self, x, y, k, metric="euclidean"):
        """(dist, index): for each row of x its k nearest rows of y, nearest first (equal
        distances: the smaller index first), exact, any k from 1 to n. dist is m x k of x's
        dtype, index m x k int64; ndarrays for host operands, Arrays for Arrays. metric as
        pairwise_distances takes it ("sqeuclidean" returns squared distances)."""
        code = _params.metric(metric, "kneighbors")
        x = _operand(x, "x", self)
        y = _operand(y, "y", self)
        dtype, m, n, d = _pair(x, y)
        k = _params.n_neighbors(k, n, "kneighbors")
        if any(type(a) is Array for a in (x, y)):
            with self._lock:
                self._live()
                dist = self._alloc((m, k), m * k, dtype)
                index = self._alloc((m, k), m * k, _I64)
        else:
            dist = np.empty((m, k), dtype)
            index = np.empty((m, k), _I64)

        def invoke(c, h, o):
            temps = []
            try:
                ih = index._h if type(index) is Array else self._wrap(index, temps)
                return _gk_knn(c, code, m, n, d, k, h[0], h[1], o, ih)
            finally:
                for t in temps:
                    _gk_buffer_destroy(t)

        self._call(invoke, (x, y), (m, k), dtype, dist)
        return dist, index

    # -- random numbers ----------------------------------------------------------------------------

    def _random(self, invoke, shape, dtype, out, seed):
        dtype = _float_dtype(dtype, "dtype")
        shape = _shape(shape, dtype)
        if out is None:
            # No input says where the result should live: it lives with the context.
            with self._lock:
                self._live()
                out = self._alloc(shape, math.prod(shape), dtype)
        else:
            out = _target(self, out, shape, dtype, "out")
        result = self._call(invoke, (), shape, dtype, out)
        if type(out) is Array:
            out._seed = seed
        return result

    def uniform(self, shape, seed=None, offset=0, dtype=np.float32, out=None):
        """Uniform values in [0, 1): element i is Philox value offset + i of `seed`.

        Returns a new Array (or fills and returns out); the stream is the same on every backend.
        seed=None draws a fresh seed, kept on the Array as .seed to reproduce the values.
        """
        seed = _seed(seed)
        offset = _u64(offset, "offset")
        return self._random(lambda c, h, o: _gk_rng_uniform(c, seed, offset, o), shape, dtype, out, seed)

    def normal(self, shape, seed=None, offset=0, mean=0.0, std=1.0, dtype=np.float32, out=None):
        """Normal values mean + std * z (Box-Muller over the uniform stream); see uniform."""
        seed = _seed(seed)
        offset = _u64(offset, "offset")
        mean = float(mean)
        std = float(std)
        return self._random(
            lambda c, h, o: _gk_rng_normal(c, seed, offset, mean, std, o), shape, dtype, out, seed
        )
