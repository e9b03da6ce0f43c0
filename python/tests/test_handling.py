# SPDX-License-Identifier: MIT
"""dtype, shape, layout and result-kind handling, and where results are written."""

import numpy as np
import pytest

import gpukern
from reference import check_gemm


def test_array_basics(ctx, dtype):
    host = np.arange(12, dtype=dtype).reshape(3, 4)
    a = ctx.asarray(host)
    assert type(a) is gpukern.Array
    assert a.shape == (3, 4) and a.dtype == dtype and a.size == 12 and a.ndim == 2
    assert a.context is ctx
    got = a.get()
    assert type(got) is np.ndarray and got.dtype == dtype
    np.testing.assert_array_equal(got, host)
    np.testing.assert_array_equal(np.asarray(a), host)
    assert np.asarray(a, dtype=np.float64).dtype == np.float64
    assert repr(a).startswith("gpukern.Array([[")
    c = ctx.asarray(host, copy=True)
    host[0, 0] = 99  # copy=True copied; by default a CPU context shares the ndarray's memory
    assert c.get()[0, 0] == 0
    assert a.get()[0, 0] == (99 if ctx.backend == "cpu" else 0)
    assert ctx.asarray(a) is a
    assert ctx.asarray(a, dtype=np.float64 if dtype == np.float32 else np.float32).dtype != dtype


def test_asarray_takes_array_likes_and_converts_on_request(ctx):
    assert ctx.asarray([1.0, 2.5]).dtype == np.float64
    assert ctx.asarray([1, 2], dtype=np.float32).get().tolist() == [1.0, 2.0]
    with pytest.raises(TypeError):
        ctx.asarray([1, 2])
    with pytest.raises(TypeError):
        ctx.asarray(np.zeros(3, np.float16))


def test_arrays_cannot_be_made_directly():
    with pytest.raises(TypeError):
        gpukern.Array()


def test_ndarrays_in_ndarray_out_and_arrays_in_array_out(ctx, dtype):
    x = np.ones(5, dtype)
    assert type(ctx.add(x, x)) is np.ndarray
    a = ctx.asarray(x)
    assert type(ctx.add(a, a)) is gpukern.Array
    # Mixed: the result lives with the context.
    r = ctx.add(a, x)
    assert type(r) is gpukern.Array
    np.testing.assert_array_equal(r.get(), 2 * x)


@pytest.mark.parametrize("bad", [np.int32, np.int64, np.float16, np.complex64, np.bool_])
def test_other_dtypes_raise_type_error(ctx, bad):
    x = np.ones(4, bad)
    y = np.ones(4, np.float32)
    for call in (lambda: ctx.add(x, y), lambda: ctx.add(y, x), lambda: ctx.exp(x), lambda: ctx.sum(x),
                 lambda: ctx.scale(2.0, x), lambda: ctx.uniform(4, 1, dtype=bad)):
        with pytest.raises(TypeError):
            call()


def test_mixed_float_dtypes_raise_type_error(ctx):
    f, d = np.ones(4, np.float32), np.ones(4, np.float64)
    with pytest.raises(TypeError):
        ctx.add(f, d)
    with pytest.raises(TypeError):
        ctx.add(ctx.asarray(f), ctx.asarray(d))
    with pytest.raises(TypeError):
        ctx.matmul(f.reshape(2, 2), d.reshape(2, 2))
    with pytest.raises(TypeError):
        ctx.add(f, f, out=d)


def test_non_arrays_raise_type_error_and_lists_are_array_likes(ctx):
    got = ctx.add([1.0, 2.0], np.ones(2))  # as scikit-learn: lists are converted by NumPy
    assert type(got) is np.ndarray and got.tolist() == [2.0, 3.0]
    assert ctx.rbf_matrix([[0.0, 1.0], [1.0, 0.0]], gamma=1.0).shape == (2, 2)
    with pytest.raises(TypeError, match="int64"):
        ctx.add([1, 2], np.ones(2))  # then the dtype rule: no integers
    for bad in (3.0, "abc", object(), {"a": 1.0}):
        with pytest.raises(TypeError):
            ctx.exp(bad)


def test_float32_and_float64_are_kept(ctx, dtype):
    x = np.full(3, 0.5, dtype)
    for r in (ctx.add(x, x), ctx.exp(x), ctx.matmul(x.reshape(1, 3), x.reshape(3, 1)), ctx.rbf_rows(
            x.reshape(3, 1), x.reshape(3, 1), 1.0), ctx.uniform(3, 0, dtype=dtype).get()):
        assert r.dtype == dtype


def test_non_native_byte_order_is_converted(ctx):
    x = np.arange(6, dtype=">f4")
    np.testing.assert_array_equal(ctx.add(x, x), 2 * np.arange(6, dtype=np.float32))
    assert ctx.add(x, x).dtype == np.float32
    ctx.scale(3.0, x)  # in place through a native copy written back
    np.testing.assert_array_equal(x, 3 * np.arange(6))


def test_non_contiguous_inputs(ctx, rng, dtype):
    base = rng.uniform(-1, 1, (40, 30)).astype(dtype)
    views = [base[::2, ::3], base.T, np.asfortranarray(base), base[:, 5]]
    for v in views:
        np.testing.assert_array_equal(ctx.add(v, v), v + v)
        np.testing.assert_array_equal(ctx.mul(v, np.ascontiguousarray(v)), v * v)
    check_gemm(ctx.matmul(base.T, base), base.T, base, None, 1.0, 0.0, False, False, dtype)


def test_zero_sized_and_zero_dimensional(ctx, dtype, kind):
    e = np.zeros((0, 3), dtype)
    s = np.array(2.0, dtype)
    if kind == "array":
        e, s = ctx.asarray(e), ctx.asarray(s)
    r = ctx.add(e, e)
    assert r.shape == (0, 3)
    assert ctx.sum(e) == 0.0 and ctx.nrm2(e) == 0.0
    t = ctx.mul(s, s)
    assert t.shape == ()
    assert float(np.asarray(t)) == 4.0
    assert ctx.rbf_matrix(np.zeros((0, 2), dtype), np.zeros((5, 2), dtype), 1.0).shape == (0, 5)
    assert ctx.uniform((2, 0), 1).shape == (2, 0)


@pytest.mark.parametrize("call", [
    lambda c, d: c.add(np.ones(3, d), np.ones(4, d)),
    lambda c, d: c.add(np.ones((2, 3), d), np.ones((3, 2), d)),
    lambda c, d: c.add(np.ones(6, d), np.ones((2, 3), d)),
    lambda c, d: c.dot(np.ones(3, d), np.ones(4, d)),
    lambda c, d: c.axpy(1.0, np.ones(3, d), np.ones(4, d)),
    lambda c, d: c.matmul(np.ones((2, 3), d), np.ones((4, 2), d)),
    lambda c, d: c.matmul(np.ones((2, 2, 2), d), np.ones((2, 2), d)),
    lambda c, d: c.gemm(np.ones((2, 3), d), np.ones((2, 3), d)),
    lambda c, d: c.gemm(np.ones((2, 3), d), np.ones((3, 4), d), np.ones((2, 3), d)),
    lambda c, d: c.gemm(np.ones(3, d), np.ones((3, 4), d)),
    lambda c, d: c.rbf_rows(np.ones((3, 2), d), np.ones((3, 3), d), 1.0),
    lambda c, d: c.rbf_rows(np.ones(3, d), np.ones(3, d), 1.0),
    lambda c, d: c.rbf_matrix(np.ones((3, 2), d), np.ones((3, 3), d), 1.0),
    lambda c, d: c.rbf_matvec(np.ones((3, 2), d), np.ones((4, 2), d), np.ones(3, d), 1.0),
    lambda c, d: c.exp(np.ones(3, d), out=np.ones(4, d)),
    lambda c, d: c.uniform((2, -1), 1),
    lambda c, d: c.uniform(3, -1),
    lambda c, d: c.uniform(3, 1, offset=2**64),
])
def test_shape_and_value_errors_raise_value_error(ctx, call):
    with pytest.raises(ValueError):
        call(ctx, np.float32)


def test_out_parameter(ctx, rng, dtype, kind):
    x = rng.uniform(-1, 1, 50).astype(dtype)
    out = np.empty(50, dtype) if kind == "ndarray" else ctx.empty(50, dtype)
    assert ctx.add(x, x, out=out) is out
    np.testing.assert_array_equal(np.asarray(out), x + x)
    assert ctx.exp(x, out=out) is out
    m = rng.uniform(-1, 1, (6, 5)).astype(dtype)
    mout = np.empty((6, 6), dtype) if kind == "ndarray" else ctx.empty((6, 6), dtype)
    assert ctx.matmul(m, m.T, out=mout) is mout
    assert ctx.rbf_matrix(m, m, 0.5, out=mout) is mout
    assert np.asarray(mout).diagonal().tolist() == [1.0] * 6


def test_out_may_be_an_input_for_elementwise_ops(ctx, dtype):
    x = np.arange(10, dtype=dtype)
    assert ctx.add(x, x, out=x) is x
    np.testing.assert_array_equal(x, 2 * np.arange(10))
    a = ctx.asarray(np.arange(10, dtype=dtype))
    ctx.mul(a, a, out=a)
    np.testing.assert_array_equal(a.get(), np.arange(10) ** 2)


def test_overlapping_ndarrays_behave_like_numpy(ctx, dtype):
    # A shifted view of the output is read before it is overwritten, as in NumPy.
    x = np.arange(10, dtype=dtype)
    expected = x[:-1] + x[1:]
    ctx.add(x[:-1], x[1:], out=x[1:])
    np.testing.assert_array_equal(x[1:], expected)
    # The same for exp's lean path: a shifted out= through a copy, out= x in place.
    x = np.linspace(-1, 1, 10).astype(dtype)
    expected = ctx.exp(x[:-1].copy())
    shifted = x[1:]
    assert ctx.exp(x[:-1], out=shifted) is shifted
    np.testing.assert_array_equal(shifted, expected)
    expected = ctx.exp(x.copy())
    assert ctx.exp(x, out=x) is x
    np.testing.assert_array_equal(x, expected)
    m = np.arange(16, dtype=dtype).reshape(4, 4)
    expected = m @ m
    ctx.matmul(m, m, out=m)
    np.testing.assert_array_equal(m, expected)


def test_in_place_operations_write_their_operand(ctx, rng, dtype, kind):
    x = rng.uniform(-1, 1, 20).astype(dtype)
    y = rng.uniform(-1, 1, 20).astype(dtype)
    expected = (y.astype(np.float64) + 2.0 * x).astype(dtype)
    yy = y.copy() if kind == "ndarray" else ctx.asarray(y, copy=True)
    assert ctx.axpy(2.0, x, yy) is yy
    np.testing.assert_allclose(np.asarray(yy), expected, rtol=2 * np.finfo(dtype).eps)
    xx = x.copy() if kind == "ndarray" else ctx.asarray(x, copy=True)
    assert ctx.scale(-0.5, xx) is xx
    np.testing.assert_array_equal(np.asarray(xx), x * dtype(-0.5))


def test_in_place_on_non_contiguous_ndarray(ctx, dtype):
    y = np.zeros((4, 6), dtype)
    col = y[:, 2]
    assert ctx.axpy(3.0, np.ones(4, dtype), col) is col
    np.testing.assert_array_equal(y[:, 2], 3.0)
    assert y.sum() == 12.0
    c = np.ones((6, 6), dtype)[::2, ::2]
    ctx.gemm(np.eye(3, dtype=dtype), np.full((3, 3), 2, dtype), c, beta=1.0)
    np.testing.assert_array_equal(c, 3.0)


def test_read_only_targets_raise_value_error(ctx):
    y = np.ones(3, np.float32)
    y.flags.writeable = False
    with pytest.raises(ValueError):
        ctx.axpy(1.0, np.ones(3, np.float32), y)
    with pytest.raises(ValueError):
        ctx.scale(1.0, y)
    with pytest.raises(ValueError):
        ctx.add(np.ones(3, np.float32), np.ones(3, np.float32), out=y)
    # Read-only inputs are fine.
    np.testing.assert_array_equal(ctx.add(y, y), [2, 2, 2])


def test_cpu_context_uses_contiguous_ndarrays_in_place():
    with gpukern.Context("cpu") as ctx:
        x = np.arange(5, dtype=np.float64)
        ptr = x.ctypes.data
        assert ctx.scale(2.0, x) is x and x.ctypes.data == ptr
        np.testing.assert_array_equal(x, 2 * np.arange(5))


def test_gemm_without_c_ignores_beta(ctx, dtype):
    a = np.eye(3, dtype=dtype)
    np.testing.assert_array_equal(ctx.gemm(a, a, alpha=2.0, beta=5.0), 2 * a)


def test_context_properties(ctx, backend):
    assert ctx.backend == backend
    assert isinstance(ctx.device_name, str) and ctx.device_name
    assert backend in repr(ctx)
    ctx.add(np.ones(3), np.ones(3))
    assert ctx.last_backend == backend
    ctx.synchronize()


def test_calibrate(backend):
    if not hasattr(gpukern._core.LIB, "gk_context_calibrate"):
        pytest.skip("libgpukern %s predates gk_context_calibrate" % gpukern.library_version)
    with gpukern.Context(backend) as ctx:
        ctx.calibrate()  # one backend: nothing to measure, at once
        np.testing.assert_array_equal(ctx.add(np.ones(2), np.ones(2)), [2, 2])


def test_auto_context_picks_an_available_backend():
    with gpukern.Context() as ctx:
        assert ctx.backend in gpukern.available_backends()


def test_bad_context_arguments():
    with pytest.raises(ValueError):
        gpukern.Context("opencl")
    with pytest.raises(ValueError):
        gpukern.Context("cpu", device=-1)
    with pytest.raises(TypeError):
        gpukern.Context("cpu", device=1.5)
