# SPDX-License-Identifier: MIT
# gk_ctypes.py - what the ctypes benchmarks share: loading, ops' argument types, contexts, a timer.
"""The library through ctypes for the benchmarks: the ops' argument types, a context of any
backend (a CPU one with a thread count), and a best-of-reps timer."""
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


def declare_ops(lib):
    """Sets the argument types of device buffers and of every operation; returns lib."""
    vp, sz, dbl, u64, i = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_double, ctypes.c_uint64,
                           ctypes.c_int)
    pd = ctypes.POINTER(ctypes.c_double)
    lib.gk_version_string.restype = ctypes.c_char_p
    lib.gk_context_destroy.argtypes = [vp]
    lib.gk_context_synchronize.argtypes = [vp]
    lib.gk_buffer_create.argtypes = [vp, i, sz, ctypes.POINTER(vp)]
    lib.gk_buffer_destroy.argtypes = [vp]
    for name in ("gk_add", "gk_sub", "gk_mul"):
        getattr(lib, name).argtypes = [vp, vp, vp, vp]
    lib.gk_fill.argtypes = [vp, dbl, vp]
    lib.gk_copy.argtypes = [vp, vp, vp]
    lib.gk_axpy.argtypes = [vp, dbl, vp, vp]
    lib.gk_scale.argtypes = [vp, dbl, vp]
    lib.gk_exp.argtypes = [vp, vp, vp]
    lib.gk_sum.argtypes = [vp, vp, pd]
    lib.gk_dot.argtypes = [vp, vp, vp, pd]
    lib.gk_nrm2.argtypes = [vp, vp, pd]
    lib.gk_gemm.argtypes = [vp, i, i, sz, sz, sz, dbl, vp, sz, vp, sz, dbl, vp, sz]
    lib.gk_rbf_rows.argtypes = [vp, sz, sz, dbl, vp, vp, vp]
    lib.gk_rbf_matrix.argtypes = [vp, sz, sz, sz, dbl, vp, vp, vp]
    lib.gk_rbf_matvec.argtypes = [vp, sz, sz, sz, dbl, vp, vp, vp, vp]
    lib.gk_rng_uniform.argtypes = [vp, u64, u64, vp]
    lib.gk_rng_normal.argtypes = [vp, u64, u64, dbl, dbl, vp]
    return lib


def context(lib, backend, threads=0):
    """(status, context) on backend (1 CPU, 2 CUDA) with cpu_threads = threads (0: default)."""
    opts = Options()
    lib.gk_context_options_init(ctypes.byref(opts))
    opts.backend, opts.cpu_threads = backend, threads
    ctx = ctypes.c_void_p()
    return lib.gk_context_create_ex(ctypes.byref(opts), ctypes.byref(ctx)), ctx


def cpu_context(lib, threads):
    """(status, context) of a CPU context with cpu_threads = threads (0: the library's default)."""
    return context(lib, 1, threads)


def best(fn, reps):
    """The shortest of reps timed calls of fn, after one untimed call."""
    fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)
