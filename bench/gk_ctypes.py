# SPDX-License-Identifier: MIT
# gk_ctypes.py - what the ctypes CPU benchmarks share: loading, a CPU context, a timer.
"""The library through ctypes for the CPU benchmarks: a CPU context and a best-of-reps timer."""
import ctypes
import time


class Options(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("backend", ctypes.c_int32),
                ("device", ctypes.c_int32), ("cpu_threads", ctypes.c_int32),
                ("flags", ctypes.c_uint32)]


def load(path):
    """The library at path with the argument types of contexts, host buffers and errors set."""
    lib = ctypes.CDLL(path)
    vp, sz = ctypes.c_void_p, ctypes.c_size_t
    lib.gk_context_options_init.argtypes = [ctypes.POINTER(Options)]
    lib.gk_context_create_ex.argtypes = [ctypes.POINTER(Options), ctypes.POINTER(vp)]
    lib.gk_context_device_name.argtypes = [vp]
    lib.gk_context_device_name.restype = ctypes.c_char_p
    lib.gk_buffer_wrap_host.argtypes = [vp, ctypes.c_int, sz, vp, ctypes.POINTER(vp)]
    lib.gk_last_error.restype = ctypes.c_char_p
    return lib


def cpu_context(lib, threads):
    """(status, context) of a CPU context with cpu_threads = threads (0: the library's default)."""
    opts = Options()
    lib.gk_context_options_init(ctypes.byref(opts))
    opts.backend, opts.cpu_threads = 1, threads
    ctx = ctypes.c_void_p()
    return lib.gk_context_create_ex(ctypes.byref(opts), ctypes.byref(ctx)), ctx


def best(fn, reps):
    """The shortest of reps timed calls of fn, after one untimed call."""
    fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)
