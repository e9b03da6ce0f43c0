# SPDX-License-Identifier: MIT
"""Other libraries' arrays in: DLPack, the CUDA array interface and host arrays, as Arrays.

Everything a foreign array says about itself (device, dtype, strides) is checked here, before
any C call, and memory where the context computes is wrapped without a copy.
"""

import math
from ctypes import byref, c_void_p

import numpy as np

from . import _dlpack
from ._array import _new_array
from ._base import (
    _F32,
    _F64,
    _GK_DTYPE,
    _check_size,
    _dtype_message,
    _error,
    _float_dtype,
    _gk_buffer_create,
    _gk_buffer_wrap_device,
    _gk_buffer_wrap_host,
    _lib_version,
)

# Producers whose __dlpack__ predates max_version (DLPack < 1.0): asked the old way at once.
_LEGACY_PRODUCERS = set()


def _kind(obj):
    return "%s.%s" % (type(obj).__module__.split(".")[0], type(obj).__qualname__)


def _where(ctx):
    return "cpu" if ctx._backend == "cpu" else "cuda:%d" % ctx._device


def _device_error(what, obj, where, ctx):
    return ValueError(
        "%s (%s) is on %s but the context computes on %s: gpukern takes arrays in the context's "
        "memory without a copy%s; move it first (e.g. tensor.to('%s'), cupy.asarray / "
        "cupy.asnumpy) or use a Context on %s"
        % (what, _kind(obj), where, _where(ctx),
           ", and host arrays (staged by the library)" if ctx._backend == "cuda" else "",
           _where(ctx), where)
    )


def _layout(shape, strides):
    """False for row-major, True for the transpose of a row-major 2-D array, else None.

    strides count elements (None: row-major); axes of one element may have any stride.
    """
    if strides is None or math.prod(shape) == 0:
        return False
    step = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != step:
            break
        step *= n
    else:
        return False
    if len(shape) == 2 and strides[0] == 1 and strides[1] == shape[0]:
        return True
    return None


class NeedsCopy(ValueError):
    """A foreign array whose memory the C API cannot address as it is (strides it cannot
    follow, data not aligned to the dtype): refused where no copy may be made, else copied."""


def _strides_error(what, obj, shape, strides):
    return NeedsCopy(
        "%s (%s) has shape %s with strides %s (in elements): the C API addresses row-major "
        "(C-contiguous) arrays and, for @ / matmul / gemm, transposes of them; pass a contiguous "
        "copy (tensor.contiguous(), cupy.ascontiguousarray, numpy.ascontiguousarray)"
        % (what, _kind(obj), shape, strides)
    )


def _wrap(ctx, data, dtype, shape, transposed, keep):
    """An Array over memory the context can address (no copy); keep is what owns the memory."""
    _check_size(shape, dtype.itemsize, "the foreign array's shape")
    size = math.prod(shape)
    if size and data % dtype.itemsize:
        raise NeedsCopy(
            "the foreign array's data (address 0x%x) is not aligned to its %d-byte elements, which the "
            "C API requires; pass an aligned copy (numpy.array(x), tensor.clone())" % (data, dtype.itemsize))
    code = _GK_DTYPE[dtype]
    cuda = ctx._backend == "cuda"
    if cuda and size and _gk_buffer_wrap_device is None:
        raise NotImplementedError("libgpukern %s lacks gk_buffer_wrap_device (1.2)" % _lib_version())
    h = c_void_p()
    with ctx._lock:
        ch = ctx._live()
        if ctx._pending:
            ctx._free_pending()
        if size == 0:
            status = _gk_buffer_create(ch, code, 0, byref(h))
        elif cuda:
            status = _gk_buffer_wrap_device(ch, code, size, data, byref(h))
        else:
            status = _gk_buffer_wrap_host(ch, code, size, data, byref(h))
        if status:
            raise _error(status)
    a = _new_array(h, ctx, shape, dtype, size)
    a._t = bool(transposed) and shape[0] > 1 and shape[1] > 1
    a._keep = keep
    return a


def describe(host):
    """What decides whether an ndarray can be wrapped: its dtype, strides, flags."""
    flags = host.flags
    return "dtype %s, strides %s, %s, %s" % (host.dtype, host.strides,
                                             "writable" if flags.writeable else "read-only",
                                             "aligned" if flags.aligned else "not aligned to its dtype")


def wrap_ndarray(ctx, host, what):
    """A CPU context's Array over an ndarray's memory, or None where that needs a copy."""
    dt = host.dtype
    flags = host.flags
    if not (dt.kind == "f" and dt.itemsize in (4, 8) and dt.isnative) or not (flags.writeable and flags.aligned):
        return None
    if host.flags.c_contiguous:
        transposed = False
    elif host.ndim == 2 and host.flags.f_contiguous:
        transposed = True
    else:
        return None
    return _wrap(ctx, host.ctypes.data, _float_dtype(dt, what), host.shape, transposed, host)


def from_capsule(ctx, obj, what, stream, read_only_ok):
    """obj's memory through DLPack, asking the producer to order its work before `stream`."""
    kwargs = {} if stream is None else {"stream": stream}
    kind = type(obj)
    capsule = None
    if kind not in _LEGACY_PRODUCERS:
        try:
            capsule = obj.__dlpack__(max_version=_dlpack.VERSION, **kwargs)
        except TypeError:
            _LEGACY_PRODUCERS.add(kind)
    if capsule is None:
        capsule = obj.__dlpack__(**kwargs)
    t = _dlpack.Tensor(capsule)
    if t.code != _dlpack.KDL_FLOAT or t.bits not in (32, 64) or t.lanes != 1:
        raise TypeError(_dtype_message("%s (%s)" % (what, _kind(obj)), _dlpack.dtype_name(t.code, t.bits, t.lanes)))
    transposed = _layout(t.shape, t.strides)
    if transposed is None:
        raise _strides_error(what, obj, t.shape, t.strides)
    if t.read_only and not read_only_ok:
        raise BufferError(
            "%s (%s) is read-only, and a gpukern.Array over it could be written; use "
            "ctx.asarray(x, copy=True), or pass it to an op directly (inputs are only read)" % (what, _kind(obj))
        )
    dtype = np.dtype(np.float32 if t.bits == 32 else np.float64)
    data = t.data
    return _wrap(ctx, data, dtype, t.shape, transposed, t.take())


def host_view(ctx, obj):
    """A CPU context's Array over obj's host memory, to be read, through NumPy's DLPack import
    (one C call: about 2 us for a torch tensor where from_capsule's Python parsing takes 13), or
    None where any of from_capsule's checks could fail: from_capsule then raises its error."""
    try:
        host = np.from_dlpack(obj)
    except Exception:  # NumPy's refusal, whatever its type (a SystemError on some bad capsules)
        return None
    dt = host.dtype
    if not (dt.kind == "f" and dt.itemsize in (4, 8) and dt.isnative and host.flags.aligned):
        return None
    flags = host.flags
    if flags.c_contiguous:
        transposed = False
    elif host.ndim == 2 and flags.f_contiguous:
        transposed = True
    else:
        return None
    return _wrap(ctx, host.ctypes.data, _F32 if dt.itemsize == 4 else _F64, host.shape, transposed, host)


def from_cuda_interface(ctx, obj, cai, what):
    """obj's memory through __cuda_array_interface__, ordered after work on the producer's stream."""
    shape = tuple(cai["shape"])
    if any(n < 0 for n in shape):
        raise ValueError("%s (%s) has shape %s in __cuda_array_interface__: a dimension is negative"
                         % (what, _kind(obj), shape))
    if cai.get("mask") is not None:
        raise ValueError("%s (%s) is a masked array, which gpukern cannot take" % (what, _kind(obj)))
    dt = np.dtype(cai["typestr"])
    if not (dt.kind == "f" and dt.itemsize in (4, 8)):
        raise TypeError(_dtype_message("%s (%s)" % (what, _kind(obj)), dt.name))
    if not dt.isnative:
        raise TypeError("%s (%s) is %s, not in the machine's byte order; convert it first"
                        % (what, _kind(obj), dt.str))
    strides = cai.get("strides")
    if strides is not None:
        if any(s % dt.itemsize for s in strides):
            raise _strides_error(what, obj, shape, tuple(s / dt.itemsize for s in strides))
        strides = tuple(s // dt.itemsize for s in strides)
    transposed = _layout(shape, strides)
    if transposed is None:
        raise _strides_error(what, obj, shape, strides)
    stream = cai.get("stream")
    if stream == 0:
        raise ValueError("%s (%s) names stream 0 in __cuda_array_interface__, which version 3 "
                         "forbids (1 is the legacy default stream)" % (what, _kind(obj)))
    if stream is not None:
        ctx._join_stream(stream)
    return _wrap(ctx, cai["data"][0], _float_dtype(dt, what), shape, transposed, obj)


def host_array(obj):
    """A host-memory object as an ndarray, without a copy where NumPy can share it."""
    if hasattr(obj, "__dlpack__"):
        try:
            return np.from_dlpack(obj)
        except (BufferError, TypeError, RuntimeError):
            pass
    return np.asarray(obj)


def convert(ctx, obj, what, host_ok, read_only_ok):
    """A foreign array as an Array over its own memory, where the context computes.

    Host memory on a CUDA context comes back as an ndarray if host_ok (for staging), else it
    is an error, as is memory of another device. Raises TypeError for objects that are not arrays.
    """
    cuda = ctx._backend == "cuda"
    if hasattr(obj, "__dlpack_device__") and hasattr(obj, "__dlpack__"):
        device_type, device_id = obj.__dlpack_device__()
        if device_type in (_dlpack.KDL_CPU, _dlpack.KDL_CUDA_HOST):
            if not cuda:
                # An operand the call only reads comes through NumPy's import, which is cheaper;
                # Arrays that outlive the call (asarray, from_dlpack) keep from_capsule's owner.
                view = host_view(ctx, obj) if read_only_ok else None
                return view if view is not None else from_capsule(ctx, obj, what, None, read_only_ok)
            if host_ok:
                return host_array(obj)
        elif device_type == _dlpack.KDL_CUDA and cuda and device_id == ctx._device:
            return from_capsule(ctx, obj, what, ctx._dlpack_stream(), read_only_ok)
        raise _device_error(what, obj, _dlpack.device_name(device_type, device_id), ctx)
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        if not cuda:
            raise _device_error(what, obj, "cuda", ctx)
        return from_cuda_interface(ctx, obj, cai, what)
    if hasattr(obj, "__array_interface__") or hasattr(obj, "__array_struct__"):
        host = np.asarray(obj)
        if cuda:
            if host_ok:
                return host
            raise _device_error(what, obj, "cpu", ctx)
        wrapped = wrap_ndarray(ctx, host, what)
        if wrapped is None:
            raise ValueError("%s (%s) cannot be used without a copy (%s); use ctx.asarray(x), which copies"
                             % (what, _kind(obj), describe(host)))
        return wrapped
    raise TypeError(
        "%s must be an array: a numpy.ndarray, a gpukern.Array, or an object exporting DLPack or "
        "__cuda_array_interface__ (torch.Tensor, cupy.ndarray), not %s" % (what, type(obj).__name__)
    )
