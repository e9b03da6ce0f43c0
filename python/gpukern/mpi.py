# SPDX-License-Identifier: MIT
"""gpukern.mpi: libgpukern_mpi's gk_mpi_rbf_matvec on the ranks of an mpi4py communicator.

    from mpi4py import MPI
    import numpy, gpukern, gpukern.mpi
    with gpukern.Context("cpu") as ctx:
        out = gpukern.mpi.rbf_matvec(ctx, MPI.COMM_WORLD, x_local, y_local, w_local, gamma)

Optional: importing it needs mpi4py and libgpukern_mpi.so.1, found through GPUKERN_MPI_LIBRARY
(a path), then next to the loaded libgpukern, then the system loader. The library must use the
same MPI as mpi4py. libgpukern_mpi links libgpukern.so.1, which the loader resolves to the copy
this package already loaded (same soname), so handles pass between the two.
"""

import ctypes
import os

try:
    from mpi4py import MPI
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("gpukern.mpi needs mpi4py (pip install mpi4py): %s" % e) from None

from . import _core
from ._base import _BACKENDS, GpukernError, InvalidParameterError
from ._core import _gamma, _matrix, _operand, _same_dtype, _target

SONAME = "libgpukern_mpi.so.1"

# MPI_Comm is a pointer in Open MPI and an int in MPICH: pass it as what this MPI uses.
_COMM = ctypes.c_void_p if MPI._sizeof(MPI.Comm) == ctypes.sizeof(ctypes.c_void_p) else ctypes.c_int


def _load():
    explicit = os.environ.get("GPUKERN_MPI_LIBRARY")
    if explicit:
        attempts = [explicit]
    else:
        attempts = [os.path.join(os.path.dirname(_core.LIBRARY_PATH), SONAME), SONAME]
    failures = []
    for path in attempts:
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            failures.append("%s: %s" % (path, e))
            continue
        P, S, D = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_double
        lib.gk_mpi_rbf_matvec.restype = ctypes.c_int
        lib.gk_mpi_rbf_matvec.argtypes = [P, _COMM, S, S, S, D, P, P, P, P]
        lib.gk_mpi_last_error.restype = ctypes.c_char_p
        lib.gk_mpi_last_error.argtypes = []
        lib.gk_mpi_cuda_aware.restype = ctypes.c_int
        lib.gk_mpi_cuda_aware.argtypes = []
        _core.LIB.gk_device_count.restype = ctypes.c_int
        _core.LIB.gk_device_count.argtypes = [ctypes.c_int]
        return lib, path
    raise ImportError(
        "gpukern.mpi: cannot load libgpukern_mpi (set GPUKERN_MPI_LIBRARY to its path). Tried:\n  "
        + "\n  ".join(failures)
    )


LIB, LIBRARY_PATH = _load()


def cuda_aware():
    """Whether the MPI library reports that it reads and writes CUDA device memory."""
    return bool(LIB.gk_mpi_cuda_aware())


def local_device(comm, backend="auto"):
    """The device ordinal for this rank when ranks on one node share its GPUs in turn (one
    rank per GPU): the rank within comm's node modulo the backend's device count."""
    count = _core.LIB.gk_device_count(_BACKENDS[backend])
    node = comm.Split_type(MPI.COMM_TYPE_SHARED)
    try:
        return node.Get_rank() % count if count > 0 else 0
    finally:
        node.Free()


# The errors a rank's argument checks raise, rebuilt by name on the ranks that agree on them.
_ERRORS = {e.__name__: e for e in (ValueError, TypeError, OverflowError, BufferError, NotImplementedError,
                                    InvalidParameterError)}


def _agree(comm, error):
    """Raises on every rank of comm the error of the lowest rank whose checks failed, if any
    did; error is this rank's (None if its checks passed). Collective: one allreduce when all
    passed, and an allgather of the messages when one did not."""
    if not comm.allreduce(error is not None, op=MPI.LOR):
        return
    if error is None:
        mine = None
    elif isinstance(error, GpukernError):
        mine = ("GpukernError", int(error.status), str(error))
    else:
        mine = (type(error).__name__, None, str(error))
    rank, (name, status, message) = next((r, e) for r, e in enumerate(comm.allgather(mine)) if e is not None)
    message = "gpukern.mpi.rbf_matvec: rank %d: %s" % (rank, message)
    if name == "GpukernError":
        raise GpukernError(status, message) from error
    raise _ERRORS.get(name, RuntimeError)(message) from error


def rbf_matvec(ctx, comm, x_local, y_local, w_local, gamma, out=None):
    """Collective over comm: out_local[i] = sum over all ranks' rows j of
    exp(-gamma * |x_i - y_j|^2) * w_j.

    x_local is (m_local, d), y_local (n_local, d), w_local (n_local,): NumPy arrays or
    gpukern.Arrays of ctx, any m_local and n_local (zero too). d, gamma and the dtype must be the
    same on every rank. Returns out (m_local,): an Array if any input is one, else an ndarray.
    A bad argument on any rank raises the same error on every rank: that rank's ValueError or
    TypeError (its message naming the rank) before the C call, and a failure in the C call
    GpukernError with the same status and message everywhere. comm must be an intracommunicator.
    """
    if not isinstance(comm, MPI.Comm):
        raise TypeError("comm must be an mpi4py MPI.Comm, not %s" % type(comm).__name__)
    if comm.Is_inter():
        raise ValueError("gpukern.mpi.rbf_matvec: comm is an intercommunicator; pass an "
                         "intracommunicator (e.g. comm.Merge())")
    # The same operand handling as Context.rbf_matvec (the package's private helpers: a change
    # to their signatures shows in ctest's python_kernel_ridge_mpi tests). Every rank checks
    # its own arguments, then all agree before the collective C call, which a rank that raised
    # alone would leave the others waiting in.
    error = None
    try:
        x = _operand(x_local, "x_local", ctx)
        y = _operand(y_local, "y_local", ctx)
        w = _operand(w_local, "w_local", ctx)
        dtype = _same_dtype((x, y, w), ("x_local", "y_local", "w_local"))
        m, d = _matrix(x, "x_local")
        n, dy = _matrix(y, "y_local")
        if dy != d:
            raise ValueError("x_local has %d features per row but y_local has %d" % (d, dy))
        if w.shape != (n,):
            raise ValueError("w_local has shape %s, expected (%d,)" % (w.shape, n))
        if out is not None:
            out = _target(ctx, out, (m,), dtype, "out")
        gamma = _gamma(gamma, d, caller="gpukern.mpi.rbf_matvec")
        ctx._live()
    except Exception as e:  # re-raised below, on every rank
        error = e
    _agree(comm, error)
    handle = _COMM(MPI._handleof(comm))

    def invoke(c, h, o):
        status = LIB.gk_mpi_rbf_matvec(c, handle, m, n, d, gamma, h[0], h[1], h[2], o)
        if status:
            # This library's message (agreed by the ranks), not gk_last_error()'s.
            raise GpukernError(status, LIB.gk_mpi_last_error().decode("utf-8", "replace"))
        return 0

    return ctx._call(invoke, (x, y, w), (m,), dtype, out)


__all__ = ["rbf_matvec", "cuda_aware", "local_device", "LIBRARY_PATH"]
