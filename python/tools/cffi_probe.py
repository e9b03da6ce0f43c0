# SPDX-License-Identifier: MIT
"""What ctx.exp(ndarray) asks of libgpukern (np.empty, wrap x2, gk_exp, destroy x2) through cffi,
in ABI mode (ffi.dlopen) and, where a C compiler and the headers are at hand, API mode (a
compiled module): the alternatives to ctypes in bench/results/py-overhead-2026-12-06.md.
Usage: python python/tools/cffi_probe.py <include dir>... (gpukern.h and gpukern_version.h)"""

import os
import sys
import tempfile
import timeit

import cffi
import numpy as np

import gpukern

CDEF = """
typedef struct gk_context gk_context; typedef struct gk_buffer gk_buffer;
int gk_context_create(int b, gk_context **out);
int gk_buffer_wrap_host(gk_context *ctx, int dtype, size_t count, void *data, gk_buffer **out);
void gk_buffer_destroy(gk_buffer *b);
int gk_exp(gk_context *ctx, const gk_buffer *x, gk_buffer *out);
"""


def measure(label, ffi, lib):
    pc = ffi.new("gk_context **")
    assert lib.gk_context_create(1, pc) == 0
    ch = pc[0]
    x = np.ones(16, np.float32)
    hx, ho = ffi.new("gk_buffer **"), ffi.new("gk_buffer **")

    def run():
        o = np.empty(16, np.float32)
        lib.gk_buffer_wrap_host(ch, 1, 16, ffi.from_buffer(x), hx)
        lib.gk_buffer_wrap_host(ch, 1, 16, ffi.from_buffer(o), ho)
        lib.gk_exp(ch, hx[0], ho[0])
        lib.gk_buffer_destroy(hx[0])
        lib.gk_buffer_destroy(ho[0])
        return o

    assert np.allclose(run(), np.exp(x))
    best = min(timeit.repeat(run, number=200, repeat=300)) / 200
    print("cffi %s: np.empty + wrap x2 + gk_exp + destroy x2: %.2f us" % (label, best * 1e6))


def main():
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    measure("ABI mode", ffi, ffi.dlopen(gpukern.library_path))
    if len(sys.argv) < 2:
        print("(API mode needs the include directories as arguments)")
        return
    api = cffi.FFI()
    api.cdef(CDEF)
    libdir = os.path.dirname(gpukern.library_path)
    api.set_source("_gk_cffi_probe", "#include <gpukern.h>", include_dirs=[os.path.abspath(d) for d in sys.argv[1:]],
                   library_dirs=[libdir],
                   extra_link_args=["-l:" + os.path.basename(gpukern.library_path), "-Wl,-rpath," + libdir])
    with tempfile.TemporaryDirectory() as tmp:
        api.compile(tmpdir=tmp)
        sys.path.insert(0, tmp)
        module = __import__("_gk_cffi_probe")
        measure("API mode", module.ffi, module.lib)


if __name__ == "__main__":
    main()
