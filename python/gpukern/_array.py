# SPDX-License-Identifier: MIT
"""gpukern.Array: an n-dimensional array in the memory of a Context's backend."""

import numpy as np

from ._base import _address, _error, _gk_buffer_destroy, _gk_buffer_read


def _new_array(h, ctx, shape, dtype, size):
    """An Array over the buffer handle h, which it owns from now on."""
    a = Array.__new__(Array)
    a._h = h
    a._ctx = ctx
    a._shape = shape
    a._dtype = dtype
    a._size = size
    return a


class Array:
    """An n-dimensional float32/float64 array in the memory of a Context's backend.

    Made by Context.asarray, Context.empty and operations on Arrays. It keeps its Context
    alive; get() (or numpy.asarray) copies it to a new ndarray.
    """

    __slots__ = ("_h", "_ctx", "_shape", "_dtype", "_size")

    def __init__(self):
        raise TypeError("gpukern.Array is made by Context.asarray, Context.empty or an operation")

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
    def context(self):
        return self._ctx

    def get(self):
        """A new ndarray with the contents (waits for queued work on CUDA)."""
        host = np.empty(self._shape, self._dtype)
        with self._ctx._lock:
            status = _gk_buffer_read(self._h, 0, self._size, _address(host))
            if status:
                raise _error(status)
        return host

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("a gpukern.Array cannot be seen as an ndarray without a copy")
        host = self.get()
        return host if dtype is None else host.astype(dtype, copy=False)

    def __repr__(self):
        return "gpukern.Array(shape=%s, dtype=%s, backend=%r)" % (self._shape, self._dtype, self._ctx._backend)

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
