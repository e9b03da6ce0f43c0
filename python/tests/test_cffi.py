# SPDX-License-Identifier: MIT
"""C consumers' other binding route: cffi in ABI mode, from the preprocessed public header."""

import ctypes
import os
import shutil
import subprocess

import numpy as np
import pytest

import gpukern
from gpukern import _lib

cffi = pytest.importorskip("cffi", reason="cffi is not installed")

HERE = os.path.dirname(os.path.abspath(__file__))


def include_dirs():
    """GPUKERN_INCLUDE (colon separated), else the headers beside the library, the source tree's."""
    if os.environ.get("GPUKERN_INCLUDE"):
        return os.environ["GPUKERN_INCLUDE"].split(os.pathsep), True
    libdir = os.path.dirname(gpukern.library_path)
    # pip's install: gpukern/include/ beside gpukern/libgpukern.so.1; <build>/lib ->
    # <build>/include (generated gpukern_version.h); <prefix>/lib -> <prefix>/include.
    guesses = [os.path.join(libdir, "include"), os.path.join(HERE, "..", "..", "include"),
               os.path.join(libdir, "..", "include")]
    return [os.path.normpath(d) for d in guesses], False


def preprocess(tmp_path, source):
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        pytest.skip("no C compiler (%s) to preprocess gpukern.h" % cc)
    dirs, explicit = include_dirs()
    found = [d for d in ("gpukern.h", "gpukern_version.h") if any(os.path.isfile(os.path.join(i, d)) for i in dirs)]
    if len(found) < 2:
        message = "gpukern.h and gpukern_version.h not both in %s (set GPUKERN_INCLUDE)" % dirs
        if explicit:
            pytest.fail(message)
        pytest.skip(message)
    # glibc's <stddef.h>/<stdint.h> use GNU extensions cdef cannot parse, and cffi already knows
    # size_t and the fixed-width types: empty stand-ins keep only gpukern's own declarations.
    stubs = tmp_path / "stubs"
    stubs.mkdir(exist_ok=True)
    (stubs / "stddef.h").write_text("")
    (stubs / "stdint.h").write_text("")
    (tmp_path / "in.c").write_text(source)
    cmd = [cc, "-E", "-P", "-nostdinc", "-DGK_API=", "-I", str(stubs)]
    for d in dirs:
        cmd += ["-I", d]
    return subprocess.run(cmd + [str(tmp_path / "in.c")], check=True, capture_output=True, text=True).stdout


@pytest.fixture
def ffi_lib(tmp_path):
    ffi = cffi.FFI()
    ffi.cdef(preprocess(tmp_path, '#include "gpukern.h"\n'))
    return ffi, ffi.dlopen(gpukern.library_path)


def test_version_matches_the_header(ffi_lib, tmp_path):
    ffi, lib = ffi_lib
    text = preprocess(tmp_path, '#include "gpukern_version.h"\nGK_VERSION_MAJOR GK_VERSION_MINOR GK_VERSION_PATCH\n')
    major, minor, patch = (int(v) for v in text.split())
    header = major * 10000 + minor * 100 + patch
    assert lib.gk_version_number() // 10000 == header // 10000 == _lib.ABI_MAJOR
    assert lib.gk_version_number() >= header
    assert ffi.string(lib.gk_version_string()).decode() == gpukern.library_version


def test_options_struct_layout_agrees_with_ctypes(ffi_lib):
    ffi, lib = ffi_lib
    assert ffi.sizeof("gk_context_options") == ctypes.sizeof(_lib.ContextOptions)
    for name, _ in _lib.ContextOptions._fields_:
        assert ffi.offsetof("gk_context_options", name) == getattr(_lib.ContextOptions, name).offset
    o = ffi.new("gk_context_options *")
    lib.gk_context_options_init(o)
    assert o.struct_size == ffi.sizeof("gk_context_options")
    assert o.backend == lib.GK_BACKEND_AUTO


def test_add_through_cffi(ffi_lib):
    ffi, lib = ffi_lib
    pctx = ffi.new("gk_context **")
    assert lib.gk_context_create(lib.GK_BACKEND_CPU, pctx) == lib.GK_OK
    ctx = pctx[0]
    x = np.arange(100, dtype=np.float32)
    y = np.full(100, 0.5, dtype=np.float32)
    z = np.empty(100, dtype=np.float32)
    short = np.empty(99, dtype=np.float32)
    bufs = []
    try:
        for a in (x, y, z, short):
            pb = ffi.new("gk_buffer **")
            assert lib.gk_buffer_wrap_host(ctx, lib.GK_FLOAT32, a.size, ffi.from_buffer(a), pb) == lib.GK_OK
            bufs.append(pb[0])
        assert lib.gk_add(ctx, bufs[0], bufs[1], bufs[2]) == lib.GK_OK
        np.testing.assert_array_equal(z, x + y)
        assert lib.gk_add(ctx, bufs[0], bufs[1], bufs[3]) == lib.GK_E_SHAPE
        assert b"gk_add" in ffi.string(lib.gk_last_error())
        result = ffi.new("double *")
        assert lib.gk_sum(ctx, bufs[2], result) == lib.GK_OK
        assert result[0] == float((x + y).sum())
    finally:
        for b in bufs:
            lib.gk_buffer_destroy(b)
        lib.gk_context_destroy(ctx)
