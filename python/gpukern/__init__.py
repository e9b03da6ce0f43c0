# SPDX-License-Identifier: MIT
"""gpukern: libgpukern's numerical kernels on a GPU or the CPU, with NumPy arrays in and out.

    import numpy, gpukern
    with gpukern.Context() as ctx:                 # "auto": CUDA when usable, else the CPU
        x = ctx.asarray(numpy.random.rand(1000).astype(numpy.float32))
        y = ctx.exp(ctx.add(x, x))                 # Arrays in, Array out (context memory)
        print(ctx.sum(y), ctx.add(x.get(), x.get()))  # ndarrays in, ndarray out

The library is found through GPUKERN_LIBRARY (a path), then a copy next to this package, then
the system loader and pkg-config's libdir; `library_path` says which file was loaded.
"""

from ._core import (
    LIBRARY_PATH as library_path,
    Array,
    Context,
    GpukernError,
    Status,
    available_backends,
    device_count,
    from_dlpack,
)
from ._base import _lib_version

#: Version of the loaded libgpukern ("major.minor.patch"): the one pip built into the package,
#: or the one GPUKERN_LIBRARY names.
library_version = _lib_version()
#: The package is versioned as the library it ships (pyproject.toml reads CMakeLists.txt).
__version__ = library_version

__all__ = [
    "Array",
    "Context",
    "GpukernError",
    "Status",
    "available_backends",
    "device_count",
    "from_dlpack",
    "library_path",
    "library_version",
]
