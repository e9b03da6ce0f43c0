# SPDX-License-Identifier: MIT
"""What NumPy users reach for first: reductions with axis/keepdims, unary operators, ** with
scalars, ufuncs, creation functions, and the dtype rule with NumPy scalars (issue 36)."""

import numpy as np
import pytest

import gpukern

AXES = [None, 0, 1, 2, -1, (0, 1), (1, 2), (0, 2), (0, 1, 2), ()]
TOL = {np.float32: 2e-5, np.float64: 1e-12}


def test_reductions_take_axis_and_keepdims_as_numpy(ctx, rng, dtype):
    x = rng.random((3, 4, 5)).astype(dtype)
    a = ctx.asarray(x)
    for name in ["sum", "mean", "var", "std", "max", "min", "prod"]:
        for axis in AXES:
            for keepdims in (False, True):
                got = getattr(a, name)(axis=axis, keepdims=keepdims)
                want = getattr(x, name)(axis=axis, keepdims=keepdims)
                if np.ndim(want) == 0 and not keepdims:
                    assert isinstance(got, np.generic) and got.dtype == dtype, (name, axis)
                else:
                    assert type(got) is gpukern.Array and got.dtype == dtype, (name, axis, keepdims)
                np.testing.assert_allclose(np.asarray(got), want, rtol=TOL[dtype], err_msg="%s %s" % (name, axis))
        # numpy's functions defer to the methods
        np.testing.assert_allclose(getattr(np, name)(a), getattr(np, name)(x), rtol=TOL[dtype])
    for name in ["argmax", "argmin"]:
        for axis in [None, 0, 1, 2, -1]:
            got = getattr(a, name)(axis=axis)
            np.testing.assert_array_equal(got, getattr(x, name)(axis=axis))
        assert getattr(np, name)(a) == getattr(x, name)()
    assert a.std(ddof=1) == pytest.approx(x.std(ddof=1), rel=TOL[dtype])
    t = ctx.asarray(np.asfortranarray(x[0]))  # a transposed layout
    for axis in [None, 0, 1]:
        np.testing.assert_allclose(np.asarray(t.sum(axis=axis)), x[0].sum(axis=axis), rtol=TOL[dtype])
        np.testing.assert_allclose(np.asarray(t.var(axis=axis)), x[0].var(axis=axis), rtol=10 * TOL[dtype])
    with pytest.raises(np.exceptions.AxisError if hasattr(np, "exceptions") else np.AxisError):
        a.sum(axis=3)
    with pytest.raises(ValueError, match="duplicate"):
        a.sum(axis=(0, 0))
    with pytest.raises(TypeError, match="out= is not supported"):
        a.max(out=np.empty(()))
    e = ctx.empty((0, 3), dtype)
    assert e.sum(axis=0).get().tolist() == [0, 0, 0] and e.sum() == 0


def test_unary_operators_and_powers(ctx, rng, dtype):
    x = (rng.random((4, 6)) - 0.5).astype(dtype)
    a = ctx.asarray(x)
    np.testing.assert_array_equal((-a).get(), -x)
    np.testing.assert_array_equal((+a).get(), x)
    np.testing.assert_array_equal(abs(a).get(), abs(x))
    for p in (2, 2.0, 1, 0, -1, 3, 0.5):
        with np.errstate(invalid="ignore"):
            want = x ** dtype(p)
            got = a ** p
        assert type(got) is gpukern.Array and got.dtype == dtype
        np.testing.assert_array_equal(got.get(), want) if p in (2, 1, 0, -1) else \
            np.testing.assert_allclose(got.get(), want, rtol=TOL[dtype])
    np.testing.assert_allclose((2.0 ** a).get(), dtype(2) ** x, rtol=TOL[dtype])
    np.testing.assert_allclose((abs(a) ** a).get(), abs(x) ** x, rtol=TOL[dtype])
    with pytest.raises(TypeError, match="does not promote"):
        a ** np.ones((4, 6), np.float64 if dtype == np.float32 else np.float32)


def test_ufuncs_the_library_has_run_on_the_context(ctx, rng, dtype):
    x = rng.random((3, 4)).astype(dtype)
    y = rng.random((3, 4)).astype(dtype)
    a, b = ctx.asarray(x), ctx.asarray(y)
    cases = [(np.add, (a, b), x + y), (np.subtract, (a, y), x - y), (np.multiply, (x, b), x * y),
             (np.divide, (a, b), x / y), (np.exp, (a,), np.exp(x)), (np.negative, (a,), -x),
             (np.positive, (a,), x), (np.absolute, (a,), x), (np.square, (a,), x * x),
             (np.power, (a, 2), x * x), (np.add, (a, 1.5), x + dtype(1.5)), (np.subtract, (1.5, a), dtype(1.5) - x),
             (np.matmul, (a, b.T), x @ y.T)]
    for ufunc, args, want in cases:
        got = ufunc(*args)
        assert type(got) is gpukern.Array and got.dtype == dtype, ufunc.__name__
        np.testing.assert_allclose(got.get(), want, rtol=TOL[dtype], err_msg=ufunc.__name__)
        out = np.empty(want.shape, dtype)
        assert ufunc(*args, out=out) is out
        np.testing.assert_allclose(out, want, rtol=TOL[dtype], err_msg=ufunc.__name__)
        out = ctx.empty(want.shape, dtype)
        assert ufunc(*args, out=out) is out
        np.testing.assert_allclose(out.get(), want, rtol=TOL[dtype], err_msg=ufunc.__name__)
    # ndarray operators meet Arrays through the ufuncs: the result is an Array.
    assert type(x + a) is gpukern.Array and type(x * a) is gpukern.Array
    h = x.copy()
    h += a  # in place into the ndarray
    np.testing.assert_allclose(h, x + x, rtol=TOL[dtype])
    for call, name in [(lambda: np.sin(a), "numpy.sin"), (lambda: np.add.reduce(a), "numpy.add.reduce"),
                       (lambda: np.maximum(a, b), "numpy.maximum"), (lambda: np.add(a, b, where=True), "where"),
                       (lambda: np.less(x, a), "numpy.less")]:
        with pytest.raises(TypeError, match=name):
            call()


def test_dtype_rule_with_numpy_scalars(ctx, rng):
    # The Array's dtype is kept with Python and NumPy scalars alike (NumPy 1.x's value-based
    # rule; NumPy 2 would promote float32 + numpy.float64 to float64): documented in README.
    a = ctx.asarray(rng.random(4).astype(np.float32))
    for s in (1, 1.0, np.float64(1), np.float32(1), np.int64(1)):
        for r in (a + s, s + a, a * s, s - a, a / s, np.add(a, s), np.add(s, a)):
            assert r.dtype == np.float32 and type(r) is gpukern.Array


def test_creation_functions(ctx, dtype):
    for z, want in [(ctx.zeros((2, 3), dtype), np.zeros((2, 3), dtype)), (ctx.ones(4, dtype), np.ones(4, dtype)),
                    (ctx.full((2, 2), 7.5, dtype), np.full((2, 2), 7.5, dtype)),
                    (ctx.arange(5, dtype=dtype), np.arange(5, dtype=dtype)),
                    (ctx.arange(1, 2, 0.25, dtype=dtype), np.arange(1, 2, 0.25, dtype=dtype))]:
        assert type(z) is gpukern.Array and z.dtype == dtype and z.context is ctx
        np.testing.assert_array_equal(z.get(), want)
    a = ctx.ones((3, 2), dtype)
    for like, fill in [(ctx.zeros_like(a), 0), (ctx.ones_like(a), 1), (ctx.full_like(a, 3), 3)]:
        assert like.shape == (3, 2) and like.dtype == dtype
        assert (like.get() == fill).all()
    e = ctx.empty_like(np.zeros((2, 5), np.float32))
    assert e.shape == (2, 5) and e.dtype == np.float32
    assert ctx.zeros_like(a, dtype=np.float64).dtype == np.float64
    assert ctx.zeros(3).dtype == np.float32  # the package's default dtype, as empty()
    with pytest.raises(TypeError, match="int64"):
        ctx.arange(5, dtype=np.int64)


# -- scikit-learn's conventions on the kernel calls ---------------------------------------------


def test_rbf_calls_validate_gamma_as_scikit_learn(ctx, rng, dtype):
    x = rng.random((5, 3)).astype(dtype)
    y = rng.random((4, 3)).astype(dtype)
    w = rng.random(4).astype(dtype)
    d2 = ((x.astype(np.float64)[:, None, :] - y[None, :, :]) ** 2).sum(axis=2)
    scale = 1.0 / (3 * x.astype(np.float64).var())
    for gamma, g in [(None, 1 / 3), ("auto", 1 / 3), ("scale", scale), (0, 0.0), (2, 2.0), (np.float32(0.5), 0.5)]:
        tol = 1e-4 if dtype == np.float32 else 1e-10
        np.testing.assert_allclose(ctx.rbf_matrix(x, y, gamma=gamma), np.exp(-g * d2), rtol=tol)
        np.testing.assert_allclose(ctx.rbf_matvec(x, y, w, gamma=gamma), np.exp(-g * d2) @ w, rtol=tol)
    # y=None is x (rbf_kernel(X)), with an Array as with an ndarray
    np.testing.assert_allclose(np.asarray(ctx.rbf_matrix(ctx.asarray(x))), ctx.rbf_matrix(x, x), rtol=1e-6)
    assert ctx.rbf_matrix(x).shape == (5, 5)
    v = rng.random(5).astype(dtype)
    np.testing.assert_array_equal(ctx.rbf_matvec(x, None, v), ctx.rbf_matvec(x, x, v))
    np.testing.assert_array_equal(ctx.rbf_matvec(ctx.asarray(x), None, v).get(), ctx.rbf_matvec(x, x, v))
    # lists, as scikit-learn takes them (then the dtype rule: NumPy's float64)
    rows = x.tolist()
    for got, want in [(ctx.rbf_rows(rows, rows), ctx.rbf_rows(x.astype(np.float64), x.astype(np.float64))),
                      (ctx.rbf_matrix(rows), ctx.rbf_matrix(x.astype(np.float64))),
                      (ctx.rbf_matvec(rows, None, v.tolist()), ctx.rbf_matvec(x.astype(np.float64), None,
                                                                               v.astype(np.float64)))]:
        assert type(got) is np.ndarray and got.dtype == np.float64
        np.testing.assert_array_equal(got, want)
    for bad in (-1, -1e-300, float("nan"), float("inf"), np.float32("inf"), "Scale", "bogus", True, [1.0], 1j):
        with pytest.raises(gpukern.InvalidParameterError, match="'gamma' parameter of rbf_matrix") as e:
            ctx.rbf_matrix(x, y, gamma=bad)
        assert isinstance(e.value, ValueError) and isinstance(e.value, TypeError)
        with pytest.raises(ValueError, match="rbf_rows"):
            ctx.rbf_rows(x, x, gamma=bad)
        with pytest.raises(ValueError, match="rbf_matvec"):
            ctx.rbf_matvec(x, y, w, gamma=bad)
    # a constant x: var 0, and scikit-learn's "scale" is then 1.0
    c = np.ones((3, 2), dtype)
    np.testing.assert_allclose(ctx.rbf_matrix(c, gamma="scale"), np.ones((3, 3)))
