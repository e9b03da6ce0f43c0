# SPDX-License-Identifier: MIT
"""Finds libgpukern, loads it with ctypes and declares the C API's prototypes."""

import ctypes
import ctypes.util
import glob
import os
import subprocess

#: The ABI major version this package binds (the library's SOVERSION).
ABI_MAJOR = 1
SONAME = "libgpukern.so.%d" % ABI_MAJOR

_P = ctypes.c_void_p  # every opaque handle and raw memory pointer
_PP = ctypes.POINTER(ctypes.c_void_p)
_S = ctypes.c_size_t
_D = ctypes.c_double
_I = ctypes.c_int  # gk_status, gk_backend, gk_dtype and gk_transpose are int-sized enums
_U64 = ctypes.c_uint64


class ContextOptions(ctypes.Structure):
    """struct gk_context_options, as gpukern.h 1.0 lays it out."""

    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("backend", ctypes.c_int32),
        ("device", ctypes.c_int32),
        ("cpu_threads", ctypes.c_int32),
        ("flags", ctypes.c_uint32),
    ]


#: GK_FLAG_ALLOW_TF32 of gk_context_options.flags.
FLAG_ALLOW_TF32 = 1


class Kernel(ctypes.Structure):
    """struct gk_kernel, as gpukern.h 1.3 lays it out."""

    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("kind", ctypes.c_int32),
        ("gamma", ctypes.c_double),
        ("coef0", ctypes.c_double),
        ("degree", ctypes.c_double),
        ("nu", ctypes.c_double),
    ]


_KPTR = ctypes.POINTER(Kernel)

_DPTR = ctypes.POINTER(_D)

# name: (restype, argtypes) for the whole GPUKERN_1.0 API, so a library missing any of it is
# rejected at import rather than at the first call that needs the symbol.
PROTOTYPES = {
    "gk_version_number": (ctypes.c_uint32, []),
    "gk_version_string": (ctypes.c_char_p, []),
    "gk_status_string": (ctypes.c_char_p, [_I]),
    "gk_last_error": (ctypes.c_char_p, []),
    "gk_backend_available": (_I, [_I]),
    "gk_context_options_init": (None, [ctypes.POINTER(ContextOptions)]),
    "gk_context_create": (_I, [_I, _PP]),
    "gk_context_create_ex": (_I, [ctypes.POINTER(ContextOptions), _PP]),
    "gk_context_destroy": (None, [_P]),
    "gk_context_backend": (_I, [_P]),
    "gk_context_last_backend": (_I, [_P]),
    "gk_context_device_name": (ctypes.c_char_p, [_P]),
    "gk_context_synchronize": (_I, [_P]),
    "gk_buffer_create": (_I, [_P, _I, _S, _PP]),
    "gk_buffer_wrap_host": (_I, [_P, _I, _S, _P, _PP]),
    "gk_buffer_view": (_I, [_P, _S, _S, _PP]),
    "gk_buffer_destroy": (None, [_P]),
    "gk_buffer_count": (_S, [_P]),
    "gk_buffer_dtype": (_I, [_P]),
    "gk_buffer_write": (_I, [_P, _S, _S, _P]),
    "gk_buffer_read": (_I, [_P, _S, _S, _P]),
    "gk_fill": (_I, [_P, _D, _P]),
    "gk_copy": (_I, [_P, _P, _P]),
    "gk_add": (_I, [_P, _P, _P, _P]),
    "gk_sub": (_I, [_P, _P, _P, _P]),
    "gk_mul": (_I, [_P, _P, _P, _P]),
    "gk_axpy": (_I, [_P, _D, _P, _P]),
    "gk_scale": (_I, [_P, _D, _P]),
    "gk_exp": (_I, [_P, _P, _P]),
    "gk_sum": (_I, [_P, _P, _DPTR]),
    "gk_dot": (_I, [_P, _P, _P, _DPTR]),
    "gk_nrm2": (_I, [_P, _P, _DPTR]),
    "gk_gemm": (_I, [_P, _I, _I, _S, _S, _S, _D, _P, _S, _P, _S, _D, _P, _S]),
    "gk_rbf_rows": (_I, [_P, _S, _S, _D, _P, _P, _P]),
    "gk_rbf_matrix": (_I, [_P, _S, _S, _S, _D, _P, _P, _P]),
    "gk_rbf_matvec": (_I, [_P, _S, _S, _S, _D, _P, _P, _P, _P]),
    "gk_rng_uniform": (_I, [_P, _U64, _U64, _P]),
    "gk_rng_normal": (_I, [_P, _U64, _U64, _D, _D, _P]),
}

# Appended by later 1.x releases (a new version node each): bound when the library has them.
LATER_PROTOTYPES = {
    "gk_context_calibrate": (_I, [_P, ctypes.c_uint32]),  # 1.1
    "gk_buffer_wrap_device": (_I, [_P, _I, _S, _P, _PP]),  # 1.2
    "gk_buffer_data": (_P, [_P]),  # 1.2
    "gk_context_set_stream": (_I, [_P, _P]),  # 1.2
    "gk_context_stream": (_P, [_P]),  # 1.2
    "gk_device_count": (_I, [_I]),  # 1.2
    "gk_div": (_I, [_P, _P, _P, _P]),  # 1.2
    "gk_kernel_init": (None, [_KPTR, _I]),  # 1.3
    "gk_kernel_matrix": (_I, [_P, _KPTR, _S, _S, _S, _P, _P, _P]),  # 1.3
    "gk_kernel_matmul": (_I, [_P, _KPTR, _S, _S, _S, _S, _P, _P, _P, _P]),  # 1.3
    "gk_distance_matrix": (_I, [_P, _I, _S, _S, _S, _P, _P, _P]),  # 1.3
    "gk_knn": (_I, [_P, _I, _S, _S, _S, _S, _P, _P, _P, _P]),  # 1.3
}


def _pkg_config_libdir():
    """pkg-config's libdir for gpukern, or raises OSError saying why there is none."""
    try:
        proc = subprocess.run(
            ["pkg-config", "--print-errors", "--variable=libdir", "gpukern"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError) as e:
        raise OSError("cannot run pkg-config: %s" % e) from None
    libdir = proc.stdout.strip()
    if proc.returncode != 0 or not libdir:
        raise OSError(proc.stderr.strip().splitlines()[0] if proc.stderr.strip() else "no libdir")
    return libdir


def _find_library():
    found = ctypes.util.find_library("gpukern")
    if not found:
        raise OSError("not found")
    return found


def _next_to(package_dir):
    # The ABI-versioned name first, then the development symlink, then any other copy.
    copies = sorted(glob.glob(os.path.join(package_dir, "libgpukern.so*")))
    for name in (SONAME, "libgpukern.so"):
        path = os.path.join(package_dir, name)
        if path in copies:
            return path
    if not copies:
        raise OSError("no such file")
    return copies[0]


def load(environ=os.environ, package_dir=os.path.dirname(os.path.abspath(__file__))):
    """Returns (ctypes.CDLL, path) of libgpukern, or raises ImportError listing every attempt.

    GPUKERN_LIBRARY, when set, is the only place tried: a library asked for by path must not be
    silently replaced by another copy (which would, e.g., run a build tree's tests against an
    older installed library).
    """
    explicit = environ.get("GPUKERN_LIBRARY")
    if explicit:
        failures = []
        attempts = [("GPUKERN_LIBRARY=%s" % explicit, lambda: explicit)]
    else:
        failures = ["GPUKERN_LIBRARY: not set"]
        attempts = [
            ("next to the package: %s" % os.path.join(package_dir, "libgpukern.so*"),
             lambda: _next_to(package_dir)),
            ("system loader: %s" % SONAME, lambda: SONAME),
            ("ctypes.util.find_library('gpukern')", _find_library),
            ("pkg-config --variable=libdir gpukern",
             lambda: os.path.join(_pkg_config_libdir(), SONAME)),
        ]
    for where, how in attempts:
        try:
            lib = ctypes.CDLL(how())
            _bind(lib)
        except OSError as e:
            failures.append("%s: %s" % (where, e))
            continue
        return lib, _loaded_path(lib)
    raise ImportError(
        "gpukern: cannot load libgpukern (set GPUKERN_LIBRARY to its path). Tried:\n  "
        + "\n  ".join(failures)
    )


def _bind(lib):
    for name, (restype, argtypes) in PROTOTYPES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise OSError("does not export %s" % name) from None
        fn.restype = restype
        fn.argtypes = argtypes
    for name, (restype, argtypes) in LATER_PROTOTYPES.items():
        fn = getattr(lib, name, None)
        if fn is not None:
            fn.restype = restype
            fn.argtypes = argtypes
    if lib.gk_version_number() // 10000 != ABI_MAJOR:
        raise OSError(
            "is libgpukern %s; this package needs %d.x"
            % (lib.gk_version_string().decode(), ABI_MAJOR)
        )


class _DlInfo(ctypes.Structure):
    _fields_ = [
        ("dli_fname", ctypes.c_char_p),
        ("dli_fbase", ctypes.c_void_p),
        ("dli_sname", ctypes.c_char_p),
        ("dli_saddr", ctypes.c_void_p),
    ]


def _loaded_path(lib):
    """The file the dynamic loader actually mapped (a bare soname says nothing about which)."""
    try:
        dladdr = ctypes.CDLL(None).dladdr
    except AttributeError:
        return lib._name
    dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    info = _DlInfo()
    if dladdr(ctypes.cast(lib.gk_version_number, ctypes.c_void_p), ctypes.byref(info)) == 0:
        return lib._name
    return os.path.realpath(info.dli_fname.decode())
