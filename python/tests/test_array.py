# SPDX-License-Identifier: MIT
"""gpukern.Array against NumPy on the same data, per backend: operators, @ and .T, views by
slicing, reductions, conversions, Python protocols, printing, and the errors for what the C
API cannot do."""

import copy
import operator
import pickle

import numpy as np
import pytest

import gpukern
from reference import REDUCTION_TOL, check_gemm


def data(rng, shape, dtype, low=-1.0, high=1.0):
    return rng.uniform(low, high, shape).astype(dtype)


def address(a):
    """Where an Array's element 0 is (its memory, on either backend)."""
    if a.device == "cpu":
        return a.__array_interface__["data"][0]
    return a.__cuda_array_interface__["data"][0]


def same(got, expected):
    """An Array result equal to NumPy's: type, shape, dtype and every value (bit for bit)."""
    assert type(got) is gpukern.Array
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_array_equal(got.get(), expected)


def same_signs(got, expected):
    """As same() for an Array (an ndarray result: its values), and with NumPy's signs of zeros and
    infinities; NaNs where NumPy has them, whatever their sign."""
    if type(got) is gpukern.Array:
        same(got, expected)
        got = got.get()
    else:
        assert type(got) is np.ndarray and got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)
    nan = np.isnan(expected)
    assert (np.isnan(got) == nan).all()
    assert (np.signbit(got) == np.signbit(expected))[~nan].all()


def fetch_any(r):
    return r.get() if type(r) is gpukern.Array else r


BINARY = [operator.add, operator.sub, operator.mul, operator.truediv]
IN_PLACE = {operator.add: operator.iadd, operator.sub: operator.isub, operator.mul: operator.imul,
            operator.truediv: operator.itruediv}


@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 4), ()])
def test_arithmetic_with_arrays_is_numpys(ctx, rng, dtype, op, shape):
    x, y = data(rng, shape, dtype, -1e3, 1e3), data(rng, shape, dtype, -1e3, 1e3)
    a, b = ctx.asarray(x, copy=True), ctx.asarray(y, copy=True)
    same(op(a, b), op(x, y))
    same(op(a, y), op(x, y))  # an ndarray operand is staged
    same(op(x, b), op(x, y))  # ndarray (op) Array: NumPy defers to the Array
    keep = a
    a = IN_PLACE[op](a, b)
    assert a is keep  # in place: the same Array, written
    np.testing.assert_array_equal(a.get(), op(x, y))


@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
@pytest.mark.parametrize("scalar", [2, -0.75, 1e3, 0.1, np.float32(3.5), np.float64(-2.25), True])
def test_arithmetic_with_scalars_is_numpys(ctx, rng, dtype, op, scalar):
    x = data(rng, (4, 9), dtype, -1e3, 1e3)
    a = ctx.asarray(x, copy=True)
    same(op(a, scalar), op(x, dtype(scalar)))
    same(op(scalar, a), op(dtype(scalar), x))
    keep = a
    a = IN_PLACE[op](a, scalar)
    assert a is keep
    np.testing.assert_array_equal(a.get(), op(x, dtype(scalar)))


@pytest.mark.parametrize("scalar", [4.0, 0.5, 3.0, -7.3, 1e-3, 0.0, -0.0, np.inf])
def test_division_by_and_of_a_scalar(ctx, rng, dtype, scalar):
    x = data(rng, 1000, dtype, -1e3, 1e3)
    x[:4] = [0.0, 1.0, -1.0, -0.0]
    a = ctx.asarray(x, copy=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected, reflected = x / dtype(scalar), dtype(scalar) / x
    # Bit for bit NumPy's quotients (a fill, then gk_div), x / 0 and 0 / x included.
    same_signs(a / scalar, expected)
    same_signs(scalar / a, reflected)
    keep = a
    a /= scalar
    assert a is keep
    same_signs(a, expected)


def test_division_by_a_tiny_scalar(ctx, dtype):
    tiny = np.finfo(dtype).smallest_subnormal * 8
    x = np.array([tiny, -2 * tiny, 3000 * tiny, np.finfo(dtype).max], dtype)
    a = ctx.asarray(x, copy=True)
    with np.errstate(over="ignore"):
        expected = x / tiny
    same(a / float(tiny), expected)  # no overflow of a reciprocal: max / tiny alone is inf


def test_unary_minus_and_plus(ctx, rng, dtype):
    x = data(rng, (3, 4), dtype)
    x[0, 0] = 0.0
    a = ctx.asarray(x)
    same(-a, -x)
    assert np.signbit((-a).get()[0, 0])  # -0.0, as NumPy
    p = +a
    same(p, x)
    assert address(p) != address(a)


@pytest.mark.parametrize("shape", [(1000,), (10, 7), ()])
def test_arrays_divide_each_other_as_numpy(ctx, rng, dtype, shape):
    x, y = data(rng, shape, dtype, -1e3, 1e3), data(rng, shape, dtype, -1e3, 1e3)
    if x.size > 10:
        # IEEE's cases: division by signed zeros, 0 / 0, infinities, NaN, a subnormal quotient
        tiny = np.finfo(dtype).tiny
        x.flat[:10] = [1.0, -1.0, 0.0, np.inf, np.inf, 2.0, np.nan, tiny, -0.0, 5.0]
        y.flat[:10] = [0.0, 0.0, 0.0, np.inf, -2.0, -np.inf, 1.0, 4.0, 3.0, -0.0]
    a, b = ctx.asarray(x, copy=True), ctx.asarray(y, copy=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = x / y
    same_signs(a / b, q)
    same_signs(a / y, q)  # an ndarray operand is staged
    same_signs(x / b, q)  # ndarray / Array: NumPy defers to Array.__rtruediv__
    same_signs(ctx.div(a, b), q)
    same_signs(ctx.div(x, y), q)  # host operands: an ndarray result
    out = ctx.empty(shape, dtype)
    assert ctx.div(a, b, out=out) is out
    same_signs(out, q)
    with np.errstate(divide="ignore", invalid="ignore"):
        same_signs(a / a, x / x)  # both operands one buffer
    keep = a
    a /= b
    assert a is keep
    same_signs(a, q)
    b /= b
    with np.errstate(divide="ignore", invalid="ignore"):
        same_signs(b, y / y)


def test_division_errors_are_numpys(ctx, dtype):
    a = ctx.asarray(np.ones((3, 4), dtype))
    with pytest.raises(ValueError, match="broadcast"):
        a / ctx.asarray(np.ones(4, dtype))
    with pytest.raises(TypeError, match="astype"):
        a / ctx.asarray(np.ones((3, 4), np.float64 if dtype == np.float32 else np.float32))
    with pytest.raises(ValueError, match="transposed"):
        a.reshape(4, 3).T / ctx.asarray(np.ones((3, 4), dtype))
    with pytest.raises(TypeError, match="ctx.asarray"):
        a / [1.0, 2.0]


def test_no_broadcasting_but_scalars(ctx, dtype):
    a = ctx.asarray(np.ones((3, 4), dtype))
    b = ctx.asarray(np.ones(4, dtype))
    for call in (lambda: a + b, lambda: a * np.ones(4, dtype), lambda: ctx.add(a, b)):
        with pytest.raises(ValueError, match="broadcast") as e:
            call()
        assert "numpy.broadcast_to" in str(e.value)


def test_mixed_dtypes_are_refused(ctx):
    a = ctx.asarray(np.ones(3, np.float32))
    b = ctx.asarray(np.ones(3, np.float64))
    with pytest.raises(TypeError, match="astype"):
        a + b
    same(a.astype(np.float64) + b, np.full(3, 2.0))


@pytest.mark.parametrize("op", [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge])
def test_comparisons_raise_type_error(ctx, op):
    a = ctx.asarray(np.ones(3))
    for other in (a, 1.0, np.ones(3)):
        with pytest.raises(TypeError, match="no comparisons") as e:
            op(a, other)
        assert "numpy.asarray" in str(e.value)
    with pytest.raises(TypeError):
        hash(a)


def test_operators_refuse_other_objects(ctx):
    a = ctx.asarray(np.ones(3))
    with pytest.raises(TypeError, match="ctx.asarray"):
        a + [1.0, 2.0, 3.0]
    with pytest.raises(TypeError):
        a + "x"
    with pytest.raises(TypeError):
        a + 1j


# -- @ and .T ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_matmul_with_transposed_views(ctx, rng, dtype, ta, tb):
    m, k, n = 17, 9, 13
    x = data(rng, (k, m) if ta else (m, k), dtype)
    y = data(rng, (n, k) if tb else (k, n), dtype)
    a, b = ctx.asarray(x), ctx.asarray(y)
    aa = a.T if ta else a
    bb = b.T if tb else b
    got = aa @ bb
    assert got.shape == (m, n) and type(got) is gpukern.Array
    check_gemm(got.get(), x, y, None, 1.0, 0.0, ta, tb, dtype)
    check_gemm(ctx.gemm(aa, bb).get(), x, y, None, 1.0, 0.0, ta, tb, dtype)
    # gemm's own flags compose with a transposed view.
    c = ctx.gemm(aa, bb.T, trans_b=True)
    check_gemm(c.get(), x, y, None, 1.0, 0.0, ta, tb, dtype)
    # Fortran-ordered ndarrays are transposed operands too (no copy).
    fa = x.T if ta else np.asfortranarray(x)
    fb = y.T if tb else np.asfortranarray(y)
    assert fa.flags.f_contiguous and fb.flags.f_contiguous
    check_gemm(fetch_any(ctx.matmul(fa, fb)), x, y, None, 1.0, 0.0, ta, tb, dtype)


def test_matmul_vectors_and_ndarrays(ctx, rng, dtype):
    x = data(rng, (5, 4), dtype)
    v = data(rng, 4, dtype)
    a = ctx.asarray(x)
    w = ctx.asarray(v)
    check_gemm((a @ w).get().reshape(5, 1), x, v.reshape(4, 1), None, 1.0, 0.0, False, False, dtype)
    assert (a @ w).shape == (5,)
    assert (w @ w).shape == ()
    np.testing.assert_allclose(float(w @ w), v.astype(np.float64) @ v, rtol=1e-5)
    check_gemm((x.T @ a).get(), x.T.copy(), x, None, 1.0, 0.0, False, False, dtype)  # __rmatmul__
    with pytest.raises(ValueError, match="scalar"):
        a @ 2.0


def test_transpose_shares_memory(ctx, rng, dtype):
    x = data(rng, (3, 5), dtype)
    a = ctx.asarray(x)
    t = a.T
    assert t.shape == (5, 3) and address(t) == address(a)
    np.testing.assert_array_equal(t.get(), x.T)
    np.testing.assert_array_equal(np.asarray(t), x.T)
    assert t.strides == x.T.strides
    assert t.T.shape == (3, 5) and address(t.T) == address(a)
    same(t + t, x.T + x.T)  # transposed alike: element-wise on the stored order
    same(t * 2.0, x.T * 2)
    assert a.T.T.strides == x.strides
    v = ctx.asarray(x[0])
    assert v.T is v  # 1-D: itself, as NumPy's view of the same data
    row = ctx.asarray(x[:1])
    assert row.T.shape == (5, 1) and row.T.strides == x[:1].copy().T.copy().strides  # one column: contiguous


def test_transposed_views_refuse_what_needs_strided_memory(ctx, dtype):
    b = ctx.asarray(np.ones((4, 4), dtype))
    with pytest.raises(ValueError, match="transposed"):
        b + b.T
    with pytest.raises(ValueError, match="transposed"):
        ctx.rbf_matrix(b.T, b)
    with pytest.raises(ValueError, match="transposed"):
        b.T.reshape(16)
    with pytest.raises(ValueError, match="strided"):
        ctx.asarray(np.ones((2, 3, 4), dtype)).T


# -- views by basic indexing ------------------------------------------------------------------------


def test_slicing_the_leading_axis_returns_views(ctx, rng, dtype):
    x = data(rng, (6, 4, 3), dtype)
    a = ctx.asarray(x, copy=True)
    item = x.itemsize
    for key in [slice(1, 4), slice(None, 2), slice(-2, None), 2, -1, (1, 2), (0, slice(1, 3)), (3, 1, slice(None)),
                Ellipsis, (slice(2, 3), slice(1, 2)), (slice(0, 6), slice(None), slice(None)), (Ellipsis, slice(None)),
                slice(4, 2)]:
        v = a[key]
        expected = x[key]
        assert type(v) is gpukern.Array
        same(v, expected)
        if expected.size:
            offset = (expected.__array_interface__["data"][0] - x.__array_interface__["data"][0]) // item
            assert address(v) == address(a) + offset * item, key
    # Writes through a view land in the parent, as in NumPy.
    v = a[2:4]
    v += 1.0
    x[2:4] += 1
    np.testing.assert_array_equal(a.get(), x)
    a[1] = 5.0
    x[1] = 5
    a[0, 1:3] = np.arange(6, dtype=dtype).reshape(2, 3)
    x[0, 1:3] = np.arange(6).reshape(2, 3)
    a[5] = ctx.asarray(x[4].copy())
    x[5] = x[4]
    a[4, 0] = [7, 8, 9]
    x[4, 0] = [7, 8, 9]
    np.testing.assert_array_equal(a.get(), x)


def test_integer_indices_give_numpy_scalars(ctx, rng, dtype):
    x = data(rng, (4, 3), dtype)
    a = ctx.asarray(x)
    for key in [(1, 2), (-1, -1), (0, 0)]:
        got = a[key]
        assert type(got) is dtype and got == x[key]
    v = ctx.asarray(x[1])
    assert v[2] == x[1, 2] and type(v[2]) is dtype
    z = ctx.asarray(np.array(3.0, dtype))
    assert z[()] == 3.0 and float(z) == 3.0


def test_indices_that_are_not_one_run_give_copies(ctx, rng, dtype):
    # The documented rule: a selection that is one contiguous run is a view; any other (strided,
    # fancy, of a transposed view) is NumPy's selection as a copy: writes to it do not reach a.
    x = data(rng, (4, 5), dtype)
    a = ctx.asarray(x, copy=True)
    for key in [(slice(None), 0), slice(None, None, 2), (slice(1, 3), slice(1, 3)), (slice(None, None, -1),),
                [0, 2], np.array([1, 3]), np.array([True, False, True, False]), (Ellipsis, 1)]:
        got = a[key]
        assert type(got) is gpukern.Array and got.dtype == dtype, key
        np.testing.assert_array_equal(got.get(), x[key])
        got.fill(0)
    np.testing.assert_array_equal(a.get(), x)
    assert a.T[1, 2] == x.T[1, 2] and type(a.T[1, 2]) is dtype
    np.testing.assert_array_equal(a.T[1].get(), x.T[1])
    # numpy.newaxis (None) makes views: one run still.
    for key in [None, (None, 1), (1, None), (Ellipsis, None), (slice(1, 3), None)]:
        v = a[key]
        assert v.shape == x[key].shape, key
        if ctx.backend == "cpu":
            assert np.shares_memory(np.asarray(v), np.asarray(a))
    # Assignment writes NumPy's selection in place, whatever its layout.
    a[:, 1] = -1.0
    x[:, 1] = -1
    a[::2, 3] = np.arange(2)
    x[::2, 3] = np.arange(2)
    a.T[0] = 9
    x.T[0] = 9
    a[[1, 3]] = 4
    x[[1, 3]] = 4
    np.testing.assert_array_equal(a.get(), x)
    with pytest.raises(IndexError, match="out of bounds"):
        a[4]
    with pytest.raises(IndexError, match="out of bounds"):
        a[0, -6]
    with pytest.raises(IndexError, match="too many"):
        a[0, 0, 0]


def test_reshape_returns_views(ctx, rng, dtype):
    x = data(rng, (4, 6), dtype)
    a = ctx.asarray(x, copy=True)
    for shape in [(24,), (2, 12), (2, -1, 3), (-1,), ((3, 8),)]:
        r = a.reshape(*shape)
        same(r, x.reshape(*shape))
        assert address(r) == address(a)
    same(a.ravel(), x.ravel())
    f = a.flatten()
    assert address(f) != address(a)
    r = a.reshape(3, 8)
    r[0] = 0.0
    x.reshape(3, 8)[0] = 0
    np.testing.assert_array_equal(a.get(), x)
    for bad in [(5, 5), (-1, 5), (-1, -1), (-2, -12)]:
        with pytest.raises(ValueError):
            a.reshape(bad)
    with pytest.raises(ValueError, match="order"):
        a.reshape(24, order="F")


# -- reductions and conversions ---------------------------------------------------------------------


def test_reductions(ctx, rng, dtype):
    x = data(rng, (40, 30), dtype)
    y = data(rng, (40, 30), dtype)
    a, b = ctx.asarray(x), ctx.asarray(y)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    tol = REDUCTION_TOL[dtype]
    s = a.sum()
    assert type(s) is dtype and np.sum(a) == s  # numpy.sum defers to the method
    assert abs(float(s) - x64.sum()) <= tol * np.abs(x64).sum() + np.spacing(dtype(x64.sum()))
    for axis in (0, 1, -1):
        got = a.sum(axis=axis)
        assert got.shape == x.sum(axis=axis).shape and type(got) is gpukern.Array
        np.testing.assert_allclose(got.get(), x64.sum(axis=axis), rtol=0, atol=40 * tol * 50)
    np.testing.assert_allclose(a.T.sum(axis=0).get(), x64.T.sum(axis=0), atol=40 * tol * 50)
    c = ctx.asarray(data(rng, (3, 4, 5), dtype))
    assert c.sum(axis=0).shape == (4, 5) and c.sum(axis=-1).shape == (3, 4)
    np.testing.assert_allclose(c.sum(axis=1).get(), np.asarray(c).sum(axis=1), rtol=tol * 10)
    with pytest.raises(ValueError, match="out of bounds"):
        a.sum(axis=2)
    u, v = ctx.asarray(x[0]), ctx.asarray(y[0])
    d = u.dot(v)
    assert type(d) is dtype
    assert abs(float(d) - x64[0] @ y64[0]) <= tol * np.abs(x64[0] * y64[0]).sum() + np.spacing(dtype(d))
    check_gemm(a.dot(b.T).get(), x, y, None, 1.0, 0.0, False, True, dtype)  # 2-D: matmul, as ndarray.dot
    nrm = a.norm()
    assert type(nrm) is dtype
    np.testing.assert_allclose(float(nrm), np.linalg.norm(x64), rtol=4 * tol)


def test_copy_and_astype(ctx, rng, dtype):
    x = data(rng, (5, 3), dtype)
    a = ctx.asarray(x)
    for c in (a.copy(), copy.copy(a), copy.deepcopy(a), a.astype(dtype)):
        same(c, x)
        assert address(c) != address(a)
    assert a.astype(dtype, copy=False) is a
    other = np.float64 if dtype == np.float32 else np.float32
    same(a.astype(other), x.astype(other))
    t = a.T.copy()
    same(t, x.T)
    with pytest.raises(TypeError, match="integer") as e:
        a.astype(np.int32)
    assert "float32" in str(e.value)
    with pytest.raises(TypeError, match="float32 and float64"):
        a.astype(np.float16)
    with pytest.raises(TypeError, match="pickle a.get"):
        pickle.dumps(a)


def test_integer_data_is_refused_with_the_alternative(ctx):
    for bad in (np.arange(3), np.arange(3, dtype=np.uint8), np.ones(3, bool)):
        with pytest.raises(TypeError, match="integer or boolean") as e:
            ctx.asarray(bad)
        assert "dtype=numpy.float32" in str(e.value)
    same(ctx.asarray(np.arange(3), dtype=np.float32), np.arange(3, dtype=np.float32))


def test_python_protocols(ctx, rng, dtype, backend):
    x = data(rng, (4, 3), dtype)
    a = ctx.asarray(x)
    assert len(a) == 4 and a.ndim == 2 and a.size == 12
    assert a.nbytes == x.nbytes and a.itemsize == x.itemsize and a.strides == x.strides
    assert a.device == ("cpu" if backend == "cpu" else "cuda:0")
    rows = list(a)
    assert len(rows) == 4 and all(type(r) is gpukern.Array for r in rows)
    for r, xr in zip(rows, x):
        same(r, xr)
    v = ctx.asarray(x[:, 0].copy())
    items = list(v)
    assert items == list(x[:, 0]) and all(type(i) is dtype for i in items)
    with pytest.raises(TypeError):
        len(ctx.asarray(np.array(1.0, dtype)))
    with pytest.raises(TypeError):
        iter(ctx.asarray(np.array(1.0, dtype)))
    one = ctx.asarray(np.array([2.5], dtype))
    assert bool(one) and float(one) == 2.5 and int(one) == 2 and one.item() == 2.5
    with pytest.raises(ValueError, match="ambiguous"):
        bool(a)
    with pytest.raises(ValueError):
        float(a)
    assert a.tolist() == x.tolist()


@pytest.mark.parametrize("shape", [(3,), (2, 3), (0,), (0, 3), (), (40, 40)])
def test_repr_and_str_print_values_as_numpy(ctx, rng, dtype, shape, backend):
    x = np.asarray(data(rng, shape, dtype) * 100, dtype)
    a = ctx.asarray(x)
    assert str(a) == str(x)
    device = "cpu" if backend == "cpu" else "cuda:0"
    # NumPy's own repr, named gpukern.Array, always with the dtype, then the device; lines are
    # wrapped for the longer name, so whitespace is not compared.
    expected = "gpukern.Array(" + np.array_repr(x)[len("array("):-1]
    if "dtype=" not in expected:
        expected += ", dtype=float64"
    expected += ", device=%r)" % device
    assert "".join(repr(a).split()) == "".join(expected.split())
    lines = repr(a).splitlines()
    assert all(line.startswith(" " * len("gpukern.Array(")) for line in lines[1:])


# -- op defaults ------------------------------------------------------------------------------------


def test_random_without_a_seed_draws_one_and_keeps_it(ctx, dtype):
    a = ctx.uniform(100, dtype=dtype)
    b = ctx.uniform(100, dtype=dtype)
    assert isinstance(a.seed, int) and 0 <= a.seed < 2**64 and a.seed != b.seed
    np.testing.assert_array_equal(ctx.uniform(100, seed=a.seed, dtype=dtype).get(), a.get())
    n = ctx.normal((10, 10), mean=1.0, std=2.0, dtype=dtype)
    np.testing.assert_array_equal(ctx.normal((10, 10), n.seed, mean=1.0, std=2.0, dtype=dtype).get(), n.get())
    assert ctx.uniform(3, seed=7).seed == 7
    out = ctx.empty(5, dtype)
    assert ctx.uniform(5, out=out, dtype=dtype) is out and isinstance(out.seed, int)
    assert ctx.asarray(np.ones(2)).seed is None


def test_gamma_defaults_to_one_over_the_features(ctx, rng, dtype):
    x, y = data(rng, (7, 5), dtype), data(rng, (4, 5), dtype)
    w = data(rng, 4, dtype)
    np.testing.assert_array_equal(ctx.rbf_matrix(x, y), ctx.rbf_matrix(x, y, 0.2))
    np.testing.assert_array_equal(ctx.rbf_matvec(x, y, w), ctx.rbf_matvec(x, y, w, gamma=0.2))
    np.testing.assert_array_equal(ctx.rbf_rows(x, x[::-1].copy()), ctx.rbf_rows(x, x[::-1].copy(), 0.2))
    assert ctx.rbf_matrix(np.zeros((2, 0), dtype), np.zeros((3, 0), dtype)).tolist() == [[1.0] * 3] * 2
