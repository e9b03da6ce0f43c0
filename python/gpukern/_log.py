# SPDX-License-Identifier: MIT
"""GK_LOG for the Python side: the library prints its own errors to stderr under GK_LOG; this
prints the refusals that the package raises before any C call, in the same form.

Installed only when GK_LOG is set at import, by wrapping the public methods and functions, so
that without it calls cost nothing more. A refusal is printed once, by the outermost call of
the package on the thread (an Array operator that calls a Context method prints once)."""

import functools
import os
import sys
import threading

from ._base import GpukernError

# Dunder methods users reach through operators and NumPy; other dunders are not entry points.
_DUNDERS = {"__init__", "__add__", "__sub__", "__mul__", "__truediv__", "__radd__", "__rsub__", "__rmul__",
            "__rtruediv__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__matmul__", "__rmatmul__",
            "__pow__", "__rpow__", "__neg__", "__abs__", "__getitem__", "__setitem__", "__array__",
            "__array_ufunc__", "__dlpack__", "__copy__", "__deepcopy__", "__reduce__", "__eq__", "__ne__",
            "__lt__", "__le__", "__gt__", "__ge__", "__len__", "__bool__", "__float__", "__int__"}

_depth = threading.local()


def _wrap(fn, name):
    @functools.wraps(fn)
    def call(*args, **kwargs):
        depth = getattr(_depth, "n", 0)
        _depth.n = depth + 1
        try:
            return fn(*args, **kwargs)
        except GpukernError:
            raise  # the library printed it
        except Exception as e:
            if depth == 0:
                sys.stderr.write("gpukern: python: %s: %s: %s\n" % (name, type(e).__name__, e))
            raise
        finally:
            _depth.n = depth

    return call


def enabled():
    """GK_LOG's rule in the library: set to anything but "" or "0"."""
    return os.environ.get("GK_LOG", "") not in ("", "0")


def install(classes, namespace, functions):
    """Wraps the public methods of classes and the named functions of namespace (a dict)."""
    for cls in classes:
        for name, value in list(vars(cls).items()):
            if callable(value) and (not name.startswith("_") or name in _DUNDERS):
                setattr(cls, name, _wrap(value, "%s.%s" % (cls.__name__, name)))
    for name in functions:
        namespace[name] = _wrap(namespace[name], name)
