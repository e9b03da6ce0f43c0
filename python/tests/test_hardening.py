# SPDX-License-Identifier: MIT
"""Careless or hostile use: copies and pickles of handles, layouts written back in the right
order, unaligned, masked, oversized and empty arrays, and foreign arrays that lie."""

import copy
import pickle

import numpy as np
import pytest

import gpukern
from gpukern import _core, _dlpack


@pytest.mark.parametrize("how", [copy.copy, copy.deepcopy, pickle.dumps])
def test_a_context_is_never_copied_or_pickled(ctx, how):
    with pytest.raises(TypeError, match="gpukern.Context cannot be .*share the one you have"):
        how(ctx)
    # The original still owns its handle: closing it once destroys it once.
    assert ctx.asarray(np.ones(2, np.float32)).get().tolist() == [1.0, 1.0]


def test_copies_of_an_array_own_their_memory(ctx, dtype):
    a = ctx.asarray(np.arange(4, dtype=dtype))
    for b in (copy.copy(a), copy.deepcopy(a), copy.deepcopy([a, a])[0]):
        assert type(b) is gpukern.Array and b is not a
        b.fill(7)
        assert a.get().tolist() == [0, 1, 2, 3]
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(a)


def test_dlpack_owners_are_never_copied(ctx):
    a = gpukern.from_dlpack(np.ones(3), ctx) if ctx.backend == "cpu" else None
    if a is None:
        pytest.skip("a host producer on a CPU context")
    for how in (copy.copy, copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError, match="owns a DLPack tensor"):
            how(a._keep)


@pytest.mark.parametrize("op", ["exp", "add", "mul", "axpy"])
@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_transposed_operands_write_a_numpy_out_in_numpy_order(ctx, rng, dtype, op, layout):
    host = rng.random((3, 5)).astype(dtype)
    a = ctx.asarray(host.T.copy()).T  # a transposed view of (3, 5)
    f = ctx.asarray(np.asfortranarray(host))  # a Fortran-ordered ndarray: the same layout
    out = {"C": np.zeros((3, 5), dtype), "F": np.zeros((3, 5), dtype, order="F"),
           "strided": np.zeros((3, 10), dtype)[:, ::2]}[layout]
    out[...] = 1
    want = {"exp": np.exp(host), "add": host + host, "mul": host * host, "axpy": 1 + 2 * host}[op]
    for x in (a, f):
        out[...] = 1
        if op == "axpy":
            got = ctx.axpy(2.0, x, out)
        elif op == "exp":
            got = ctx.exp(x, out=out)
        else:
            got = getattr(ctx, op)(x, x, out=out)
        assert got is out
        np.testing.assert_allclose(out, want, rtol=1e-6)


def test_unaligned_ndarrays_are_copied_before_the_c_call(cpu, monkeypatch):
    raw = bytearray(8 * 6 + 1)
    u = np.frombuffer(raw, np.float64, count=6, offset=1)
    u[...] = np.arange(6)
    assert not u.flags.aligned
    wrap = _core._gk_buffer_wrap_host

    def aligned_only(ctx, dtype, count, data, out):
        assert data % 8 == 0, "an unaligned pointer reached gk_buffer_wrap_host"
        return wrap(ctx, dtype, count, data, out)

    monkeypatch.setattr(_core, "_gk_buffer_wrap_host", aligned_only)
    np.testing.assert_allclose(cpu.exp(u), np.exp(np.arange(6)))
    out = np.frombuffer(bytearray(8 * 6 + 1), np.float64, count=6, offset=1)
    assert cpu.add(u, u, out=out) is out
    np.testing.assert_array_equal(out, 2 * np.arange(6))
    a = cpu.asarray(u)  # shares only aligned memory: this is a copy
    assert not np.shares_memory(np.asarray(a), u)
    np.testing.assert_array_equal(a.get(), np.arange(6))
    with pytest.raises(ValueError, match="not aligned"):
        cpu.asarray(u, copy=False)
    with pytest.raises(ValueError, match="not aligned"):
        gpukern.from_dlpack(np.frombuffer(bytearray(8 * 6 + 1), np.float64, count=6, offset=1), cpu)
    # Another library's unaligned host array: copied as an operand and by asarray, as an ndarray is.
    got = cpu.exp(_DLPackOnly(u))
    assert type(got) is gpukern.Array
    np.testing.assert_allclose(got.get(), np.exp(np.arange(6)))
    b = cpu.asarray(_DLPackOnly(u))
    np.testing.assert_array_equal(b.get(), np.arange(6))
    with pytest.raises(ValueError, match="not aligned"):
        cpu.asarray(_DLPackOnly(u), copy=False)


def test_strided_host_tensors_are_copied_as_strided_ndarrays_are(cpu):
    x = np.arange(24.0).reshape(4, 6)[:, ::2]
    got = cpu.add(_DLPackOnly(x), _DLPackOnly(x))
    np.testing.assert_array_equal(got.get(), x + x)
    a = cpu.asarray(_DLPackOnly(x))
    np.testing.assert_array_equal(a.get(), x)
    assert not np.shares_memory(np.asarray(a), x)
    with pytest.raises(ValueError, match="strides"):
        cpu.asarray(_DLPackOnly(x), copy=False)
    with pytest.raises(ValueError, match="strides"):
        gpukern.from_dlpack(_DLPackOnly(x), cpu)


class _DLPackOnly:
    """A host producer with only the DLPack protocol, as a torch CPU tensor is to gpukern."""

    def __init__(self, host):
        self.host = host

    def __dlpack_device__(self):
        return self.host.__dlpack_device__()

    def __dlpack__(self, stream=None, max_version=None, **kwargs):
        return self.host.__dlpack__(stream=stream, **({} if max_version is None else {"max_version": max_version}))


@pytest.mark.parametrize("shape", [(2**62, 4), (2**63 + 1, 2), (2**61, 2**3), (0, 2**64)])
def test_shapes_past_what_memory_can_address_raise_overflow(ctx, shape):
    for make in (ctx.empty, ctx.uniform, ctx.normal):
        with pytest.raises(OverflowError, match=r"2\*\*63 - 1"):
            make(shape)
    with pytest.raises(OverflowError):
        ctx.empty((0,)).reshape(0, 2**64)


def test_masked_arrays_are_refused(ctx):
    m = np.ma.array([1.0, 1e30], mask=[False, True])
    for call in (lambda: ctx.sum(m), lambda: ctx.exp(m), lambda: ctx.add(m, m), lambda: ctx.asarray(m),
                 lambda: ctx.exp(np.ones(2), out=m)):
        with pytest.raises(ValueError, match="MaskedArray.*filled"):
            call()
    a = ctx.empty(2, np.float64)
    with pytest.raises(ValueError, match="MaskedArray"):
        a[:] = m


class _Lying:
    """A DLPack producer whose tensor reports a shape it cannot have."""

    def __init__(self, shape, strides, ndim=None):
        self.host = np.zeros(6)
        self.shape, self.strides = shape, strides

    def __dlpack_device__(self):
        return (_dlpack.KDL_CPU, 0)

    def __dlpack__(self, stream=None, max_version=None):
        return _dlpack.export(self.host, self.host.ctypes.data, (_dlpack.KDL_CPU, 0), 64, self.shape,
                              self.strides, max_version is not None)


# An op's operand is first offered to numpy.from_dlpack, which refuses this capsule but leaves its
# error pending when the capsule's destructor (a ctypes callback) runs: reported, not raised.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_dlpack_producers_reporting_negative_shapes_are_refused(cpu):
    with pytest.raises(BufferError, match="negative"):
        gpukern.from_dlpack(_Lying((-2, -3), (-3, 1)), cpu)
    with pytest.raises(BufferError, match="negative"):
        cpu.exp(_Lying((-2, 3), (3, 1)))


def test_empty_arrays_convert_to_empty_ndarrays(ctx, dtype):
    for shape in [(0,), (0, 2), (2, 0)]:
        e = ctx.empty(shape, dtype)
        got = np.asarray(e)
        assert got.shape == shape and got.dtype == dtype
        assert np.from_dlpack(e).shape == shape if ctx.backend == "cpu" else True


def test_empty_slice_assignment_is_a_no_op(ctx, dtype):
    a = ctx.empty((0, 2), dtype)
    a[:, 1] = np.zeros(0)
    a[:, 1] = 5.0
    a[:, 1] = ctx.empty(0, dtype)
    b = ctx.asarray(np.arange(6, dtype=dtype).reshape(3, 2))
    b[3:, 1] = np.zeros(0)
    b[1:1] = np.zeros((0, 2))
    assert b.get().tolist() == [[0, 1], [2, 3], [4, 5]]
    with pytest.raises(ValueError):
        b[1:1] = np.zeros(3)  # as NumPy: (3,) does not broadcast to (0, 2)
