# SPDX-License-Identifier: MIT
"""The optional C extension gpukern._fast (one call for a small op on ndarrays) and the ctypes
path it replaces: the same results either way, its refusals, and the fallback when it is absent."""

import threading

import numpy as np
import pytest

import gpukern
from gpukern import _array, _base, _core

OPS = {"exp": np.exp, "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}


def run(ctx, name, x, y, out=None):
    if name == "exp":
        return ctx.exp(x, out=out) if out is not None else ctx.exp(x)
    return getattr(ctx, name)(x, y)


@pytest.fixture(params=["extension", "ctypes"])
def path(request, monkeypatch):
    """Each test once through the extension (skipped where it is not built) and once without."""
    if request.param == "extension":
        if not _base._FAST_FN:
            pytest.skip("gpukern._fast is not built here (needs Python >= 3.11 and Python.h at install)")
    else:
        monkeypatch.setattr(_core, "_FAST_FN", {})
        monkeypatch.setattr(_array, "_FAST_FN", {})
    return request.param


@pytest.mark.parametrize("n", [0, 1, 16, 1000, 1 << 17])
@pytest.mark.parametrize("name", sorted(OPS))
def test_same_results_on_either_path(ctx, rng, dtype, path, name, n):
    # 1 << 17 elements run without the GIL in the extension.
    x = rng.uniform(0.5, 2.0, n).astype(dtype)
    y = rng.uniform(0.5, 2.0, n).astype(dtype)
    got = run(ctx, name, x, y)
    assert type(got) is np.ndarray and got.dtype == dtype and got.shape == x.shape
    ref = OPS[name](x, y) if name != "exp" else None
    if ref is not None:
        np.testing.assert_array_equal(got, ref)
    else:
        np.testing.assert_allclose(got, np.exp(x.astype(np.float64)), rtol=2 * np.finfo(dtype).eps)


@pytest.mark.parametrize("n", [0, 1, 16, 1000])
@pytest.mark.parametrize("name", sorted(OPS))
def test_arrays_on_either_path(ctx, rng, dtype, path, name, n):
    x = rng.uniform(0.5, 2.0, n).astype(dtype)
    y = rng.uniform(0.5, 2.0, n).astype(dtype)
    a, b = ctx.asarray(x), ctx.asarray(y)
    if name == "exp":
        got = ctx.exp(a)
        expected = ctx.exp(x)
    else:
        got = {"add": a + b, "sub": a - b, "mul": a * b, "div": a / b}[name]
        expected = OPS[name](x, y)
    assert type(got) is gpukern.Array and got.dtype == dtype and got.shape == (n,)
    np.testing.assert_array_equal(got.get(), expected)
    t = ctx.asarray(rng.uniform(0.5, 2.0, (3, 5)).astype(dtype)).T
    assert (t + t).T.shape == (3, 5) and (t + t)._t and ctx.exp(t)._t


@pytest.mark.parametrize("n", [0, 1, 16, 1000])
def test_arrays_and_scalars_on_either_path(ctx, rng, dtype, path, n):
    x = rng.uniform(0.5, 2.0, n).astype(dtype)
    a = ctx.asarray(x)
    s = 0.3  # not a dtype value: each result rounds as NumPy's with the scalar rounded first
    for got, expected in ((a * s, x * dtype(s)), (s * a, dtype(s) * x), (a + s, x + dtype(s)),
                          (s + a, dtype(s) + x), (a - s, x - dtype(s)), (s - a, dtype(s) - x),
                          (a / s, x / dtype(s)), (s / a, dtype(s) / x)):
        assert type(got) is gpukern.Array and got.dtype == dtype
        np.testing.assert_array_equal(got.get(), expected)
    t = ctx.asarray(rng.uniform(0.5, 2.0, (3, 5)).astype(dtype)).T
    np.testing.assert_array_equal((2.0 - t).get(), 2.0 - np.asarray(t))
    b = a.copy()
    b *= 2.0  # in place: the ctypes path on either
    np.testing.assert_array_equal(b.get(), x * 2)


def test_small_ndarray_ops_are_one_call_into_the_extension(ctx, rng, dtype, monkeypatch):
    # With the extension, an op on plain ndarrays, with or without an out= it may write, wraps no
    # operand through ctypes (ctx.add(x, y, out=z) took 12 us that way, against 1.3 without out=).
    if not _base._FAST_FN:
        pytest.skip("gpukern._fast is not built here (needs Python >= 3.11 and Python.h at install)")

    def refuse(*args):
        raise AssertionError("an operand wrapped through ctypes")

    monkeypatch.setattr(_core, "_gk_buffer_wrap_host", refuse)
    x = rng.uniform(0.5, 2.0, 16).astype(dtype)
    y = rng.uniform(0.5, 2.0, 16).astype(dtype)
    for name in sorted(OPS):
        args = (x,) if name == "exp" else (x, y)
        want = OPS[name](*args) if name != "exp" else np.exp(x.astype(np.float64))
        tol = 2 * np.finfo(dtype).eps if name == "exp" else 0
        np.testing.assert_allclose(getattr(ctx, name)(*args), want, rtol=tol, err_msg=name)
        out = np.empty_like(x)
        assert getattr(ctx, name)(*args, out=out) is out
        np.testing.assert_allclose(out, want, rtol=tol, err_msg=name)
        z = x.copy()  # out= one of the operands, element for element
        assert getattr(ctx, name)(*((z,) + args[1:]), out=z) is z
        np.testing.assert_allclose(z, want, rtol=tol, err_msg=name)


def test_array_reductions_are_one_c_call(ctx, rng, dtype, monkeypatch):
    # a.sum(), a.norm(), ctx.sum(a), ctx.nrm2(a) skip the general call path (2.1 us for a.sum()
    # of 16 elements through it, 1.3 without), with the same results and refusals.
    x = rng.uniform(-1, 1, (4, 5)).astype(dtype)
    a = ctx.asarray(x)
    other = gpukern.Context("cpu")
    closed = gpukern.Context(ctx.backend)
    c = closed.asarray(x)
    closed.close()

    def refuse(*args, **kwargs):
        raise AssertionError("the general call path")

    monkeypatch.setattr(gpukern.Context, "_call", refuse)
    tol = 1e-6 if dtype == np.float32 else 1e-13
    x64 = x.astype(np.float64)
    for got in (a.sum(), a.T.sum(), ctx.sum(a)):
        assert float(got) == pytest.approx(x64.sum(), abs=tol * np.abs(x64).sum())
    assert type(a.sum()) is np.dtype(dtype).type
    for got in (a.norm(), a.T.norm(), ctx.nrm2(a)):
        assert float(got) == pytest.approx(np.linalg.norm(x64), rel=tol)
    with pytest.raises(gpukern.GpukernError) as e:
        other.sum(a)
    assert e.value.status == gpukern.Status.CONTEXT_MISMATCH
    with pytest.raises(ValueError, match="closed gpukern.Context"):
        c.sum()
    other.close()


def test_in_place_and_read_only_operands(cpu, rng, dtype, path):
    x = rng.uniform(-1, 1, 64).astype(dtype)
    expected = np.exp(x.astype(np.float64))
    ro = x.copy()
    ro.flags.writeable = False
    np.testing.assert_allclose(cpu.exp(ro), expected, rtol=2 * np.finfo(dtype).eps)
    assert cpu.exp(x, out=x) is x
    np.testing.assert_allclose(x, expected, rtol=2 * np.finfo(dtype).eps)
    ones = np.ones(8, dtype)
    np.testing.assert_array_equal(cpu.add(ones, ones), np.full(8, 2, dtype))


def test_threads_share_a_context(cpu, path):
    # Big operands release the GIL in the extension; the context's lock still orders the calls.
    x = np.linspace(-1, 1, 1 << 17)
    expected = np.exp(x)
    errors = []

    def work():
        for _ in range(20):
            if not np.allclose(cpu.exp(x), expected, rtol=1e-15, atol=0):
                errors.append("wrong result")

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_the_extension_returns_the_librarys_status():
    fast = pytest.importorskip("gpukern._fast", reason="gpukern._fast is not built here")
    with gpukern.Context("cpu") as ctx:
        x = np.ones(4, np.float32)
        z = np.empty(4, np.float32)
        exp = _base._FAST_FN[id(_base._gk_exp)]
        # dtype 9 is not a gk_dtype: the wrap fails, gk_exp never runs, and the status comes back.
        assert fast.call(ctx._h.value, exp, 9, 4, x, z) == gpukern.Status.INVALID_ARGUMENT
        assert "not a gk_dtype" in _base._gk_last_error().decode()
        assert fast.call(ctx._h.value, exp, 1, 4, x, z) == 0
        np.testing.assert_allclose(z, np.exp(x), rtol=1e-6)
        with pytest.raises(ValueError, match="operand 0 has 8 bytes, out 16"):
            fast.call(ctx._h.value, exp, 1, 4, x[:2], z)
        with pytest.raises(ValueError, match="itemsize 2 is neither 4 nor 8"):
            fast.call(ctx._h.value, exp, 1, 2, x, z)
        with pytest.raises(ValueError, match="a NULL address"):
            fast.call(0, exp, 1, 4, x, z)
        with pytest.raises(TypeError, match="6 or 7 arguments, not 3"):
            fast.call(1, 2, 3)
        ro = np.empty(4, np.float32)
        ro.flags.writeable = False
        with pytest.raises((BufferError, ValueError)):
            fast.call(ctx._h.value, exp, 1, 4, x, ro)
        # new(): a new buffer written by the op, or -status (the buffer then destroyed).
        a = ctx.asarray(x)
        h = fast.new(ctx._h.value, exp, 1, 4, a._h.value)
        assert h > 0
        z = _array._new_array(__import__("ctypes").c_void_p(h), ctx, (4,), np.dtype(np.float32), 4)
        np.testing.assert_allclose(z.get(), np.exp(x), rtol=1e-6)
        assert fast.new(ctx._h.value, exp, 9, 4, a._h.value) == -gpukern.Status.INVALID_ARGUMENT
        add = _base._FAST_FN[id(_base._gk_add)]
        assert fast.new(ctx._h.value, add, 1, 5, a._h.value, a._h.value) == -gpukern.Status.SHAPE
        # scalar(): a new buffer from a copy or fill and an op, or -status.
        fill, scale = _base._FAST_FN[id(_base._gk_fill)], _base._FAST_FN[id(_base._gk_scale)]
        copy = _base._FAST_FN[id(_base._gk_copy)]
        h = fast.scalar(ctx._h.value, fill, add, 1, 4, a._h.value, 0.5, 1)
        z = _array._new_array(__import__("ctypes").c_void_p(h), ctx, (4,), np.dtype(np.float32), 4)
        np.testing.assert_array_equal(z.get(), x + np.float32(0.5))
        assert fast.scalar(ctx._h.value, copy, scale, 1, 5, a._h.value, 2.0, 0) == -gpukern.Status.SHAPE
        with pytest.raises(ValueError, match="mode 3 is not 0, 1 or 2"):
            fast.scalar(ctx._h.value, copy, scale, 1, 4, a._h.value, 2.0, 3)
