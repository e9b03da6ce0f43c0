# SPDX-License-Identifier: MIT
"""Every operation against NumPy float64 references on fresh random data, per backend."""

import math

import numpy as np
import pytest

import gpukern
from reference import RBF_TOL, REDUCTION_TOL, assert_within_ulps, check_gemm, fetch, put

SIZES = [0, 1, 7, 1000, 65537]


def data(rng, shape, dtype, low=-1.0, high=1.0):
    return rng.uniform(low, high, shape).astype(dtype)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_binary_elementwise_is_exact(ctx, rng, dtype, kind, op, n):
    x = data(rng, n, dtype, -1e3, 1e3)
    y = data(rng, n, dtype, -1e3, 1e3)
    got = fetch(getattr(ctx, op)(put(ctx, x, kind), put(ctx, y, kind)), kind)
    # For these operands the float64 result is exact (a float32 sum or product needs fewer than
    # 53 bits) or, for a float32 quotient, rounds to float32 as the exact quotient would (53 bits
    # are more than 2 * 24 + 2), so rounding it to the dtype once gives the correctly rounded
    # IEEE result.
    fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[op]
    expected = fn(x.astype(np.float64), y.astype(np.float64)).astype(dtype)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("n", SIZES)
def test_axpy_within_one_ulp(ctx, rng, dtype, kind, n):
    alpha = rng.uniform(-3, 3)
    x = data(rng, n, dtype)
    y = data(rng, n, dtype)
    y0 = y.copy()
    yy = put(ctx, y, kind)
    got = fetch(ctx.axpy(alpha, put(ctx, x, kind), yy), kind)
    a = float(dtype(alpha))  # scalars are rounded to the dtype first
    ref = a * x.astype(np.float64) + y0.astype(np.float64)
    bound = np.abs(a * x.astype(np.float64)) + np.abs(y0.astype(np.float64))
    err = np.abs(got.astype(np.float64) - ref)
    assert (err <= np.spacing(bound.astype(dtype)).astype(np.float64)).all()


@pytest.mark.parametrize("n", SIZES)
def test_scale_is_exact(ctx, rng, dtype, kind, n):
    alpha = rng.uniform(-3, 3)
    x = data(rng, n, dtype)
    expected = x * dtype(alpha)
    got = fetch(ctx.scale(alpha, put(ctx, x.copy(), kind)), kind)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("n", SIZES)
def test_exp_within_two_ulp(ctx, rng, dtype, kind, n):
    limit = 80.0 if dtype == np.float32 else 700.0
    x = data(rng, n, dtype, -limit, limit)
    got = fetch(ctx.exp(put(ctx, x, kind)), kind)
    assert got.dtype == dtype
    ref = np.exp(x.astype(np.longdouble))
    assert_within_ulps(got, ref, 2, dtype)


def test_exp_special_values(ctx, dtype, kind):
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e4, -1e4], dtype=dtype)
    got = fetch(ctx.exp(put(ctx, x, kind)), kind)
    np.testing.assert_array_equal(got, np.array([1, 1, np.inf, 0, np.nan, np.inf, 0], dtype=dtype))


@pytest.mark.parametrize("n", SIZES)
def test_reductions(ctx, rng, dtype, kind, n):
    x = data(rng, n, dtype, -10, 10)
    y = data(rng, n, dtype, -10, 10)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    tol = REDUCTION_TOL[dtype]
    xx, yy = put(ctx, x, kind), put(ctx, y, kind)

    s = ctx.sum(xx)
    assert type(s) is float
    assert abs(s - math.fsum(x64)) <= tol * math.fsum(np.abs(x64))

    d = ctx.dot(xx, yy)
    assert type(d) is float
    assert abs(d - math.fsum(x64 * y64)) <= tol * math.fsum(np.abs(x64 * y64))

    r = ctx.nrm2(xx)
    assert type(r) is float
    ref = math.sqrt(math.fsum(x64 * x64))
    assert abs(r - ref) <= tol * ref


def test_reductions_of_matrices_cover_all_elements(ctx, rng, dtype, kind):
    x = data(rng, (31, 17), dtype)
    y = data(rng, (31, 17), dtype)
    tol = REDUCTION_TOL[dtype] * x.size
    assert ctx.sum(put(ctx, x, kind)) == pytest.approx(float(x.astype(np.float64).sum()), abs=tol)
    assert ctx.dot(put(ctx, x, kind), put(ctx, y, kind)) == pytest.approx(
        float((x.astype(np.float64) * y).sum()), abs=tol)


def test_nrm2_neither_overflows_nor_underflows(ctx, dtype, kind):
    big = 1e30 if dtype == np.float32 else 1e200
    tiny = 1e-30 if dtype == np.float32 else 1e-200
    for v in (big, tiny):
        x = np.full(4, v, dtype=dtype)
        expected = 2.0 * float(x[0])
        assert ctx.nrm2(put(ctx, x, kind)) == pytest.approx(expected, rel=REDUCTION_TOL[dtype])


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (37, 29, 53), (128, 96, 160), (5, 7, 0), (0, 4, 3)])
@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_gemm(ctx, rng, dtype, kind, m, n, k, ta, tb):
    a = data(rng, (k, m) if ta else (m, k), dtype)
    b = data(rng, (n, k) if tb else (k, n), dtype)
    c = data(rng, (m, n), dtype)
    alpha, beta = rng.uniform(-2, 2), rng.uniform(-2, 2)
    cc = put(ctx, c.copy(), kind)
    out = ctx.gemm(put(ctx, a, kind), put(ctx, b, kind), cc, alpha=alpha, beta=beta, trans_a=ta, trans_b=tb)
    assert out is cc
    check_gemm(fetch(out, kind), a, b, c, alpha, beta, ta, tb, dtype)

    fresh = fetch(ctx.gemm(put(ctx, a, kind), put(ctx, b, kind), alpha=alpha, trans_a=ta, trans_b=tb), kind)
    assert fresh.shape == (m, n) and fresh.dtype == dtype
    check_gemm(fresh, a, b, None, alpha, 0.0, ta, tb, dtype)


def test_gemm_beta_zero_ignores_nan_in_c(ctx, rng, dtype, kind):
    a, b = data(rng, (8, 5), dtype), data(rng, (5, 6), dtype)
    c = np.full((8, 6), np.nan, dtype=dtype)
    got = fetch(ctx.gemm(put(ctx, a, kind), put(ctx, b, kind), put(ctx, c, kind), beta=0.0), kind)
    check_gemm(got, a, b, None, 1.0, 0.0, False, False, dtype)


@pytest.mark.parametrize("sa,sb", [((40, 30), (30, 20)), ((30,), (30, 20)), ((40, 30), (30,)), ((30,), (30,))])
def test_matmul(ctx, rng, dtype, kind, sa, sb):
    a, b = data(rng, sa, dtype), data(rng, sb, dtype)
    got = fetch(ctx.matmul(put(ctx, a, kind), put(ctx, b, kind)), kind)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert got.shape == np.shape(ref)
    A = a.reshape(1, -1) if a.ndim == 1 else a
    B = b.reshape(-1, 1) if b.ndim == 1 else b
    check_gemm(got.reshape(A.shape[0], B.shape[1]), A, B, None, 1.0, 0.0, False, False, dtype)


def test_matmul_with_empty_inner_dimension_is_zero(ctx, dtype, kind):
    a, b = np.ones((3, 0), dtype), np.ones((0, 4), dtype)
    np.testing.assert_array_equal(fetch(ctx.matmul(put(ctx, a, kind), put(ctx, b, kind)), kind), np.zeros((3, 4)))


def rbf_reference(x, y, gamma):
    diff = x.astype(np.longdouble)[:, None, :] - y.astype(np.longdouble)[None, :, :]
    return np.exp(-gamma * (diff**2).sum(axis=2))


@pytest.mark.parametrize("shift", [0.0, 1e3])
@pytest.mark.parametrize("n,d", [(1, 1), (1000, 20), (257, 3), (64, 256)])
def test_rbf_rows(ctx, rng, dtype, kind, n, d, shift):
    gamma = float(dtype(rng.uniform(0.5, 2.0) * 6.0 / d))
    a = data(rng, (n, d), dtype, 0, 1) + dtype(shift)
    b = data(rng, (n, d), dtype, 0, 1) + dtype(shift)
    got = fetch(ctx.rbf_rows(put(ctx, a, kind), put(ctx, b, kind), gamma), kind)
    assert got.shape == (n,) and got.dtype == dtype
    ref = np.exp(-gamma * ((a.astype(np.longdouble) - b) ** 2).sum(axis=1))
    np.testing.assert_allclose(got.astype(np.float64), ref.astype(np.float64), rtol=0, atol=RBF_TOL[dtype])
    same = fetch(ctx.rbf_rows(put(ctx, a, kind), put(ctx, a.copy(), kind), gamma), kind)
    np.testing.assert_array_equal(same, np.ones(n))


@pytest.mark.parametrize("shift", [0.0, 1e3])
@pytest.mark.parametrize("m,n,d", [(1, 1, 1), (100, 70, 20), (33, 65, 3), (16, 24, 256)])
def test_rbf_matrix_and_matvec(ctx, rng, dtype, kind, m, n, d, shift):
    gamma = float(dtype(rng.uniform(0.5, 2.0) * 6.0 / d))
    x = data(rng, (m, d), dtype, 0, 1) + dtype(shift)
    y = data(rng, (n, d), dtype, 0, 1) + dtype(shift)
    y[: min(m, n) // 2] = x[: min(m, n) // 2]  # some x_i = y_i: those entries are exactly 1
    w = data(rng, n, dtype)
    ref = rbf_reference(x, y, gamma)

    k = fetch(ctx.rbf_matrix(put(ctx, x, kind), put(ctx, y, kind), gamma), kind)
    assert k.shape == (m, n) and k.dtype == dtype
    np.testing.assert_allclose(k.astype(np.float64), ref.astype(np.float64), rtol=0, atol=RBF_TOL[dtype])
    half = min(m, n) // 2
    np.testing.assert_array_equal(np.diagonal(k)[:half], np.ones(half))

    v = fetch(ctx.rbf_matvec(put(ctx, x, kind), put(ctx, y, kind), put(ctx, w, kind), gamma), kind)
    assert v.shape == (m,) and v.dtype == dtype
    vref = (ref @ w.astype(np.longdouble)).astype(np.float64)
    np.testing.assert_allclose(v.astype(np.float64), vref, rtol=0,
                               atol=RBF_TOL[dtype] * float(np.abs(w.astype(np.float64)).sum()))


def test_rbf_matvec_large_n_stays_accurate(ctx, rng, dtype):
    # Many more centres than one block of any reasonable tiling, so partial sums are combined.
    x, y = data(rng, (50, 3), dtype, 0, 1), data(rng, (20000, 3), dtype, 0, 1)
    w = data(rng, 20000, dtype)
    v = ctx.rbf_matvec(x, y, w, 1.5)
    ref = (rbf_reference(x, y, float(dtype(1.5))) @ w.astype(np.longdouble)).astype(np.float64)
    np.testing.assert_allclose(v, ref, rtol=0, atol=RBF_TOL[dtype] * float(np.abs(w.astype(np.float64)).sum()))


def test_backends_agree_bit_for_bit_where_promised(rng, dtype):
    if "cuda" not in gpukern.available_backends():
        pytest.skip("needs both backends")
    x, y = data(rng, 100003, dtype), data(rng, 100003, dtype)
    with gpukern.Context("cpu") as c, gpukern.Context("cuda") as g:
        for op in ("add", "sub", "mul", "div"):
            np.testing.assert_array_equal(getattr(c, op)(x, y), getattr(g, op)(x, y))
        np.testing.assert_array_equal(c.scale(0.7, x.copy()), g.scale(0.7, x.copy()))
        for shape in ((1001,), (3, 5, 7)):
            np.testing.assert_array_equal(c.uniform(shape, 9, 5, dtype).get(), g.uniform(shape, 9, 5, dtype).get())
        np.testing.assert_allclose(c.normal(4099, 9, 1, dtype=dtype).get(), g.normal(4099, 9, 1, dtype=dtype).get(),
                                   rtol=4 * np.finfo(dtype).eps, atol=4 * np.finfo(dtype).eps)
