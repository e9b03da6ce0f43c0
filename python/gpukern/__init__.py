# SPDX-License-Identifier: MIT
"""gpukern: libgpukern's numerical kernels on a GPU or the CPU, with NumPy arrays in and out.

    import numpy, gpukern
    with gpukern.Context() as ctx:                 # "auto": CUDA when usable, else the CPU
        x = ctx.asarray(numpy.random.rand(1000).astype(numpy.float32))
        y = ctx.exp(ctx.add(x, x))                 # Arrays in, Array out (context memory)
        print(ctx.sum(y), ctx.add(x.get(), x.get()))  # ndarrays in, ndarray out

The library is the one `pip install ./python` built into this package (GPUKERN_LIBRARY, a path,
overrides it; without either, the system loader and pkg-config's libdir are tried);
`library_path` says which file was loaded, `__version__` its version.
"""

from ._core import (
    LIBRARY_PATH as library_path,
    Array,
    Context,
    GpukernError,
    InvalidParameterError,
    Status,
    available_backends,
    device_count,
    from_dlpack,
    kneighbors,
    pairwise_distances,
    pairwise_kernels,
)
from ._base import _lib_version
from . import _log

if _log.enabled():
    _log.install((Array, Context), globals(), ("from_dlpack", "device_count", "available_backends",
                                                      "pairwise_kernels", "pairwise_distances", "kneighbors"))

#: Version of the loaded libgpukern ("major.minor.patch"): the one pip built into the package,
#: or the one GPUKERN_LIBRARY names.
library_version = _lib_version()
#: The package is versioned as the library it ships (pyproject.toml reads CMakeLists.txt).
__version__ = library_version

__all__ = [
    "Array",
    "Context",
    "GpukernError",
    "InvalidParameterError",
    "Status",
    "available_backends",
    "device_count",
    "from_dlpack",
    "kneighbors",
    "library_path",
    "library_version",
    "pairwise_distances",
    "pairwise_kernels",
]
