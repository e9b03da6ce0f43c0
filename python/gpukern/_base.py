# SPDX-License-Identifier: MIT
"""The loaded library, its errors, and the dtype and shape checks that every module shares."""

import enum
import math
import operator
from ctypes import addressof, c_char, c_void_p, cast

import numpy as np

from . import _lib

LIB, LIBRARY_PATH = _lib.load()

# Module globals rather than attribute lookups on LIB: the hot path pays one dict lookup each.
_gk_last_error = LIB.gk_last_error
_gk_backend_available = LIB.gk_backend_available
_gk_buffer_create = LIB.gk_buffer_create
_gk_buffer_wrap_host = LIB.gk_buffer_wrap_host
_gk_buffer_destroy = LIB.gk_buffer_destroy
_gk_buffer_write = LIB.gk_buffer_write
_gk_buffer_read = LIB.gk_buffer_read
_gk_buffer_view = LIB.gk_buffer_view
_gk_fill = LIB.gk_fill
_gk_copy = LIB.gk_copy
_gk_add = LIB.gk_add
_gk_sub = LIB.gk_sub
_gk_mul = LIB.gk_mul
_gk_axpy = LIB.gk_axpy
_gk_scale = LIB.gk_scale
_gk_exp = LIB.gk_exp
_gk_sum = LIB.gk_sum
_gk_dot = LIB.gk_dot
_gk_nrm2 = LIB.gk_nrm2
_gk_gemm = LIB.gk_gemm
_gk_rbf_rows = LIB.gk_rbf_rows
_gk_rbf_matrix = LIB.gk_rbf_matrix
_gk_rbf_matvec = LIB.gk_rbf_matvec
_gk_rng_uniform = LIB.gk_rng_uniform
_gk_rng_normal = LIB.gk_rng_normal
# 1.2 (interop); None with an older library, whose Arrays then export no memory addresses.
_gk_buffer_data = getattr(LIB, "gk_buffer_data", None)
_gk_buffer_wrap_device = getattr(LIB, "gk_buffer_wrap_device", None)
_gk_context_stream = getattr(LIB, "gk_context_stream", None)
_gk_context_set_stream = getattr(LIB, "gk_context_set_stream", None)


def _lacking(name, release):
    """Stands in for a C function an older library lacks: calling it says so."""

    def call(*args):
        raise NotImplementedError("libgpukern %s lacks %s (%s); install the library this package "
                                  "was built with" % (_lib_version(), name, release))

    return call


# 1.2, element-wise division; with an older library every / of an Array raises as above.
_gk_div = getattr(LIB, "gk_div", None) or _lacking("gk_div", "1.2")
# 1.3, the kernel family, distances and k-NN; with an older library each call raises as above.
_gk_kernel_matrix = getattr(LIB, "gk_kernel_matrix", None) or _lacking("gk_kernel_matrix", "1.3")
_gk_kernel_matmul = getattr(LIB, "gk_kernel_matmul", None) or _lacking("gk_kernel_matmul", "1.3")
_gk_distance_matrix = getattr(LIB, "gk_distance_matrix", None) or _lacking("gk_distance_matrix", "1.3")
_gk_knn = getattr(LIB, "gk_knn", None) or _lacking("gk_knn", "1.3")

# The optional C extension (_fast.c): one small op on ndarrays in one call instead of five to
# seven through ctypes, and one on Arrays with a new result in one instead of two. Absent (a
# build without it, or a Python it does not load in), the lean paths make the same calls
# through ctypes.
try:
    from . import _fast
except ImportError:
    _fast_call = _fast_new = _fast_scalar = None
    _FAST_FN = {}
else:
    _fast.init(cast(_gk_buffer_wrap_host, c_void_p).value, cast(_gk_buffer_destroy, c_void_p).value,
               cast(_gk_buffer_create, c_void_p).value)
    _fast_call = _fast.call
    _fast_new = _fast.new
    _fast_scalar = _fast.scalar
    # The ops it may run, by the id of their ctypes function (the objects bound above: CDLL keeps
    # one per name; they are not hashable); an older library's missing gk_div is left to its
    # _lacking stand-in.
    _FAST_FN = {id(getattr(LIB, name)): cast(getattr(LIB, name), c_void_p).value
                for name in ("gk_exp", "gk_add", "gk_sub", "gk_mul", "gk_div", "gk_fill", "gk_copy", "gk_scale")
                if hasattr(LIB, name)}

_BACKENDS = {"auto": 0, "cpu": 1, "cuda": 2}
_BACKEND_NAMES = {1: "cpu", 2: "cuda"}
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
# int64 (GK_INT64) is the dtype of k-NN's index output only: every other op refuses it.
_I64 = np.dtype(np.int64)
_GK_DTYPE = {_F32: 1, _F64: 2, _I64: 3}
_U64_MAX = 2**64 - 1


class Status(enum.IntEnum):
    """gk_status: the result of every C call that can fail."""

    OK = 0
    INVALID_ARGUMENT = 1
    SHAPE = 2
    DTYPE = 3
    CONTEXT_MISMATCH = 4
    OUT_OF_MEMORY = 5
    OVERFLOW = 6
    BACKEND_UNAVAILABLE = 7
    UNSUPPORTED = 8
    DEVICE = 9
    INTERNAL = 10


class GpukernError(Exception):
    """A C call failed: `.status` is its Status, the message is gk_last_error()'s text."""

    def __init__(self, status, message):
        super().__init__(message)
        try:
            self.status = Status(status)
        except ValueError:
            self.status = status
        self.message = message

    def __reduce__(self):
        # Exceptions pickle their args, which here is the message alone (for str()).
        return (GpukernError, (int(self.status), self.message))


class InvalidParameterError(ValueError, TypeError):
    """A parameter out of its range or of the wrong kind (gamma < 0): scikit-learn's
    exception of that name, so that `except ValueError` and `except TypeError` both catch it."""


def _error(status):
    # Must run on the failing thread before its next failing call: gk_last_error is per thread.
    message = _gk_last_error().decode("utf-8", "replace")
    if not message:
        message = LIB.gk_status_string(status).decode("utf-8", "replace")
    return GpukernError(status, message)


def _lib_version():
    return LIB.gk_version_string().decode()


def _float_dtype(dtype, what):
    """The native float32/float64 dtype equal to `dtype` up to byte order, else TypeError."""
    dt = np.dtype(dtype)
    if dt.kind == "f" and dt.itemsize in (4, 8):
        return _F32 if dt.itemsize == 4 else _F64
    raise TypeError(_dtype_message(what, dt.name))


def _dtype_message(what, name):
    """Why a dtype is refused, and what to do instead."""
    if name.startswith(("int", "uint", "bool")):
        kind = "no integer or boolean dtypes (the C API computes in float32 and float64)"
    else:
        kind = "float32 and float64 only"
    return "%s is %s: gpukern has %s; convert it first, e.g. numpy.asarray(x, dtype=numpy.float32), " \
        "ctx.asarray(x, dtype=numpy.float32) or, for a tensor, x.float()" % (what, name, kind)


# The most bytes one array may span, as NumPy's limit (the largest Py_ssize_t): element counts
# past it would wrap when ctypes passes them as size_t.
_MAX_BYTES = 2**63 - 1


def _c_order(host, dtype):
    """host as a C-contiguous ndarray of dtype whose memory the C API may address: element
    aligned (a copy where it is not)."""
    host = np.asarray(host, dtype=dtype, order="C")
    return host if host.flags.aligned else host.copy()


def _refuse_masked(a, what):
    """ValueError for a numpy.ma masked array, whose mask every C call would ignore."""
    if isinstance(a, np.ma.MaskedArray):
        raise ValueError("%s is a numpy.ma.MaskedArray: gpukern has no masks and would compute with "
                         "the masked values too; pass x.filled(value), or x.compressed() for the "
                         "unmasked values alone" % what)


def _shape(shape, dtype):
    """shape as a tuple of ints; ValueError for a negative dimension, OverflowError for an array
    of more than 2**63 - 1 bytes."""
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = tuple(operator.index(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError("negative dimension in shape %s" % (shape,))
    _check_size(shape, dtype.itemsize, "shape")
    return shape


def _check_size(shape, itemsize, what):
    """OverflowError if an array of this shape would span more than 2**63 - 1 bytes, or has a
    dimension past that (which a shape of zero elements could)."""
    if any(n > _MAX_BYTES for n in shape):
        raise OverflowError("%s %s has a dimension past 2**63 - 1" % (what, shape))
    nbytes = math.prod(shape) * itemsize
    if nbytes > _MAX_BYTES:
        raise OverflowError("%s %s of %d-byte elements is %d bytes, more than an array can address "
                            "(2**63 - 1)" % (what, shape, itemsize, nbytes))


def _u64(value, what):
    value = operator.index(value)
    if not 0 <= value <= _U64_MAX:
        raise ValueError("%s must be in [0, 2**64), got %d" % (what, value))
    return value


def _address(host):
    """The data address of a C-contiguous ndarray."""
    try:
        # Half the cost of ndarray.ctypes.data, for the writable, non-empty arrays it accepts.
        return addressof(c_char.from_buffer(host))
    except (TypeError, ValueError):
        return host.ctypes.data
