# SPDX-License-Identifier: MIT
"""The kernel family, distances, kernel_matmul and k-NN against scikit-learn (and GPyTorch's
Matérn formulas, as scikit-learn's Matern kernel computes them) in float64, and within the
numerical contract of gpukern.h in float32: standardized, clustered and offset data, identical
rows, NaN and inf, sizes 1, 7, 1000 and 1025, per backend."""

import math

import numpy as np
import pytest

import gpukern
from reference import RBF_TOL, fetch, put

pytest.importorskip("sklearn", reason="scikit-learn is not installed (pip install scikit-learn): it is the reference")
from scipy.spatial.distance import cdist  # noqa: E402 (scikit-learn's dependency)
from sklearn.gaussian_process.kernels import Matern  # noqa: E402
from sklearn.metrics import pairwise as skp  # noqa: E402
from sklearn.neighbors import NearestNeighbors  # noqa: E402

KERNELS = ["rbf", "laplacian", "polynomial", "sigmoid", "linear", "cosine", "matern"]
METRICS = ["euclidean", "sqeuclidean", "manhattan", "cosine"]
BOUNDED = {"rbf", "laplacian", "sigmoid", "cosine", "matern"}
ONE_ON_IDENTICAL = {"rbf", "laplacian", "matern"}
# (m, n): every size of the contract's list on both sides of the product.
SHAPES = [(1, 7), (7, 1), (1000, 1025), (1025, 1)]
D = 13
DISTRIBUTIONS = ["standardized", "clustered", "offset"]


def make(rng, kind, rows, d=D):
    """Users' data: N(0, 1); 30 clusters with centres N(0, 9) and spread 0.3; N(0, 1) + 1e3."""
    if kind == "clustered":
        centres = rng.normal(0.0, 3.0, (30, d))
        return centres[rng.integers(0, 30, rows)] + rng.normal(0.0, 0.3, (rows, d))
    return rng.standard_normal((rows, d)) + (1e3 if kind == "offset" else 0.0)


def params(metric, d):
    """Parameters away from the defaults, so that each is seen to be passed."""
    return {"gamma": 0.7 / d, "degree": 3, "coef0": 0.5, "nu": {"matern": 2.5}.get(metric, 1.5)}


def sklearn_kernel(metric, x, y, gamma, degree, coef0, nu):
    """scikit-learn's kernels; Matérn is GPyTorch's r = sqrt(gamma) |x - y|: length_scale 1/sqrt(gamma)."""
    if metric == "matern":
        return Matern(length_scale=1.0 / math.sqrt(gamma), nu=nu)(x, y)
    kw = {"rbf": {"gamma": gamma}, "laplacian": {"gamma": gamma}, "sigmoid": {"gamma": gamma, "coef0": coef0},
          "polynomial": {"gamma": gamma, "degree": degree, "coef0": coef0}}.get(metric, {})
    return skp.pairwise_kernels(x, y, metric=metric, **kw)


def exact_kernel(metric, x, y, gamma, degree, coef0, nu):
    """The kernels' formulas in float64 from distances computed as differences (scipy's cdist):
    what scikit-learn's expanded |x|^2 + |y|^2 - 2<x, y> loses to cancellation on offset data,
    these keep; they also take NaN and inf, which scikit-learn refuses."""
    with np.errstate(all="ignore"):
        if metric == "rbf":
            return np.exp(-gamma * cdist(x, y, "sqeuclidean"))
        if metric == "laplacian":
            return np.exp(-gamma * cdist(x, y, "cityblock"))
        if metric == "matern":
            s = math.sqrt(2 * nu) * math.sqrt(gamma) * cdist(x, y)
            return np.exp(-s) * {0.5: 1.0, 1.5: 1 + s, 2.5: 1 + s + s * s / 3}[nu]
        dot = x @ y.T
        if metric == "linear":
            return dot
        if metric == "polynomial":
            return (gamma * dot + coef0) ** degree
        if metric == "sigmoid":
            return np.tanh(gamma * dot + coef0)
        nx = np.linalg.norm(x, axis=1)[:, None]
        ny = np.linalg.norm(y, axis=1)[None, :]
        return np.where((nx == 0) | (ny == 0), 0.0, dot / (nx * ny))


def exact_distance(metric, x, y):
    if metric == "cosine":
        return 1.0 - exact_kernel("cosine", x, y, 0, 0, 0, 0)  # 1 where a row is zero
    return cdist(x, y, {"manhattan": "cityblock"}.get(metric, metric))


def kernel_tolerance(metric, x, y, dtype, p):
    """gpukern.h's bound per entry: absolute for bounded kernels, else relative to the kernel on
    |x| and |y|."""
    tol = RBF_TOL[dtype]
    if metric in BOUNDED:
        return tol
    return tol * np.abs(exact_kernel(metric, np.abs(x), np.abs(y), p["gamma"], p["degree"], abs(p["coef0"]),
                                     p["nu"]))


def distance_tolerance(metric, ref, dtype):
    if metric == "cosine":
        return {np.float32: 1e-6, np.float64: 1e-12}[dtype]
    return RBF_TOL[dtype] * ref


def check(got, ref, tol, what):
    got = np.asarray(got, dtype=np.float64)
    err = np.abs(got - ref)
    bad = ~(err <= tol)
    assert not bad.any(), "%s: %d of %d entries beyond the contract, worst %r vs %r" % (
        what, bad.sum(), bad.size, got.ravel()[np.argmax(np.where(bad, err, 0))],
        ref.ravel()[np.argmax(np.where(bad, err, 0))])


# -- the kernels --------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("data", ["standardized", "clustered"])
@pytest.mark.parametrize("metric", KERNELS)
def test_kernels_match_scikit_learn_in_float64(ctx, rng, metric, data, shape):
    x, y = make(rng, data, shape[0]), make(rng, data, shape[1])
    p = params(metric, D)
    got = ctx.pairwise_kernels(x, y, metric=metric, **p)
    assert type(got) is np.ndarray and got.shape == shape and got.dtype == np.float64
    check(got, sklearn_kernel(metric, x, y, **p), kernel_tolerance(metric, x, y, np.float64, p), metric)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("data", DISTRIBUTIONS)
@pytest.mark.parametrize("metric", KERNELS)
def test_kernels_within_the_contract(ctx, rng, dtype, metric, data, shape):
    x, y = make(rng, data, shape[0]).astype(dtype), make(rng, data, shape[1]).astype(dtype)
    p = params(metric, D)
    got = ctx.pairwise_kernels(x, y, metric=metric, **p)
    assert got.dtype == dtype
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    g = float(dtype(p["gamma"]))  # the library computes with gamma rounded to the dtype
    ref = exact_kernel(metric, x64, y64, g, p["degree"], p["coef0"], p["nu"])
    check(got, ref, kernel_tolerance(metric, x64, y64, dtype, p), metric)


@pytest.mark.parametrize("data", DISTRIBUTIONS)
@pytest.mark.parametrize("metric", KERNELS)
def test_identical_rows(ctx, rng, dtype, kind, metric, data):
    # y=None is x: the diagonal pairs identical rows, and so does a row repeated in y.
    x = make(rng, data, 1025).astype(dtype)
    x[7] = x[3]
    p = params(metric, D)
    got = fetch(ctx.pairwise_kernels(put(ctx, x, kind), metric=metric, **p), kind)
    if metric in ONE_ON_IDENTICAL:
        assert (np.diag(got) == 1).all() and got[3, 7] == 1 and got[7, 3] == 1
    x64 = x.astype(np.float64)
    ref = exact_kernel(metric, x64, x64, float(dtype(p["gamma"])), p["degree"], p["coef0"], p["nu"])
    check(got, ref, kernel_tolerance(metric, x64, x64, dtype, p), metric)


@pytest.mark.parametrize("metric", KERNELS)
def test_defaults_are_scikit_learns(ctx, rng, metric):
    # gamma=None: 1 / n_features; degree 3, coef0 1; Matérn nu 1.5.
    x, y = make(rng, "standardized", 9, 5), make(rng, "standardized", 4, 5)
    got = ctx.pairwise_kernels(x, y, metric=metric)
    ref = sklearn_kernel(metric, x, y, gamma=1 / 5, degree=3, coef0=1, nu=1.5)
    check(got, ref, kernel_tolerance(metric, x, y, np.float64, {"gamma": 0.2, "degree": 3, "coef0": 1,
                                                               "nu": 1.5}), metric)
    if metric != "matern":  # scikit-learn has no Matérn in pairwise_kernels
        check(got, skp.pairwise_kernels(x, y, metric=metric), 1e-12 * (1 + np.abs(ref)), metric)


def test_the_default_kernel_is_rbf_and_poly_is_polynomial(ctx, rng):
    x = make(rng, "standardized", 6, 4)
    np.testing.assert_array_equal(ctx.pairwise_kernels(x), ctx.pairwise_kernels(x, x, "rbf"))
    np.testing.assert_array_equal(ctx.pairwise_kernels(x, metric="poly", degree=2),
                                  ctx.pairwise_kernels(x, metric="polynomial", degree=2))


@pytest.mark.parametrize("nu", [0.5, 1.5, 2.5])
def test_matern_is_gpytorchs(ctx, rng, nu):
    # GPyTorch's MaternKernel: d = |x - y| / lengthscale, exp(-sqrt(2 nu) d) times 1, 1 + sqrt3 d
    # or 1 + sqrt5 d + 5/3 d^2.
    x, y = make(rng, "clustered", 50, 6), make(rng, "clustered", 40, 6)
    length = 1.7
    r = cdist(x, y) / length
    s = math.sqrt(2 * nu) * r
    ref = np.exp(-s) * {0.5: 1.0, 1.5: 1 + s, 2.5: 1 + s + s * s / 3}[nu]
    got = ctx.pairwise_kernels(x, y, metric="matern", gamma=1 / length**2, nu=nu)
    check(got, ref, 1e-12, "matern")


@pytest.mark.parametrize("metric", KERNELS)
def test_nan_and_inf(ctx, rng, dtype, metric):
    # scikit-learn refuses non-finite input; gpukern computes with it: a NaN makes every entry
    # of its row NaN, an inf gives the limit or NaN, and the other rows are untouched.
    x, y = make(rng, "standardized", 40).astype(dtype), make(rng, "standardized", 30).astype(dtype)
    x[3, 5] = np.nan
    x[9, 0] = np.inf
    y[11, 2] = -np.inf
    p = params(metric, D)
    got = ctx.pairwise_kernels(x, y, metric=metric, **p)
    assert np.isnan(got[3]).all()
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    with np.errstate(all="ignore"):
        ref = exact_kernel(metric, x64, y64, float(dtype(p["gamma"])), p["degree"], p["coef0"], p["nu"])
    finite = np.ones(got.shape, bool)
    finite[[3, 9]] = False
    finite[:, 11] = False
    tol = RBF_TOL[dtype] if metric in BOUNDED else kernel_tolerance(metric, x64, y64, dtype, p)[finite]
    check(got[finite], ref[finite], tol, metric)
    for g, r in ((got[9], ref[9]), (got[:, 11], ref[:, 11])):
        with np.errstate(invalid="ignore"):
            limit = np.isnan(g) | (g == r) | (np.abs(g - r) <= RBF_TOL[dtype] * np.maximum(1, np.abs(r)))
        assert limit.all(), (metric, g[~limit], r[~limit])


def test_zero_features(ctx):
    # d = 0: every distance is 0 and every inner product 0 (gamma=None is then 1).
    x, y = np.empty((3, 0)), np.empty((2, 0))
    expected = {"rbf": 1.0, "laplacian": 1.0, "matern": 1.0, "linear": 0.0, "cosine": 0.0,
                "polynomial": 1.0, "sigmoid": math.tanh(1.0)}
    for metric, value in expected.items():
        np.testing.assert_array_equal(ctx.pairwise_kernels(x, y, metric=metric), np.full((3, 2), value))
    for metric in ("euclidean", "sqeuclidean", "manhattan"):
        np.testing.assert_array_equal(ctx.pairwise_distances(x, y, metric=metric), np.zeros((3, 2)))
    np.testing.assert_array_equal(ctx.pairwise_distances(x, y, metric="cosine"), np.ones((3, 2)))


def test_empty_operands(ctx):
    assert ctx.pairwise_kernels(np.empty((0, 4)), np.ones((3, 4))).shape == (0, 3)
    assert ctx.pairwise_distances(np.ones((3, 4)), np.empty((0, 4))).shape == (3, 0)
    assert ctx.kernel_matmul(np.empty((0, 4)), np.ones((3, 4)), np.ones((3, 2))).shape == (0, 2)
    np.testing.assert_array_equal(ctx.kernel_matmul(np.ones((2, 4)), np.empty((0, 4)), np.empty((0, 3))),
                                  np.zeros((2, 3)))
    dist, index = ctx.kneighbors(np.empty((0, 4)), np.ones((3, 4)), 2)
    assert dist.shape == index.shape == (0, 2)


# -- distances ----------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("data", DISTRIBUTIONS)
@pytest.mark.parametrize("metric", METRICS)
def test_distances(ctx, rng, dtype, metric, data, shape):
    x, y = make(rng, data, shape[0]).astype(dtype), make(rng, data, shape[1]).astype(dtype)
    got = ctx.pairwise_distances(x, y, metric=metric)
    assert type(got) is np.ndarray and got.shape == shape and got.dtype == dtype
    ref = exact_distance(metric, x.astype(np.float64), y.astype(np.float64))
    check(got, ref, distance_tolerance(metric, ref, dtype), metric)
    if dtype == np.float64 and data != "offset":
        # scikit-learn itself, where its expanded form does not cancel.
        check(got, skp.pairwise_distances(x, y, metric=metric), 1e-11 * (1 + ref), metric)


@pytest.mark.parametrize("alias, metric", [("l2", "euclidean"), ("l1", "manhattan"), ("cityblock", "manhattan")])
def test_metric_aliases(ctx, rng, alias, metric):
    x = make(rng, "standardized", 8)
    np.testing.assert_array_equal(ctx.pairwise_distances(x, metric=alias), ctx.pairwise_distances(x, metric=metric))


@pytest.mark.parametrize("data", DISTRIBUTIONS)
@pytest.mark.parametrize("metric", METRICS)
def test_distances_are_zero_on_identical_rows(ctx, rng, dtype, kind, metric, data):
    # Relative accuracy: 0 exactly, also where the rows are 1e3 from the origin (the expanded
    # form's cancellation gives torch's cdist 109 -> 0 and the converse, pytorch#42479).
    x = make(rng, data, 1025).astype(dtype)
    x[7] = x[3]
    got = fetch(ctx.pairwise_distances(put(ctx, x, kind), metric=metric), kind)
    if metric == "cosine":
        assert np.abs(np.diag(got)).max() <= 1e-6 and abs(got[3, 7]) <= 1e-6
    else:
        assert (np.diag(got) == 0).all() and got[3, 7] == 0 and got[7, 3] == 0
    ref = exact_distance(metric, x.astype(np.float64), x.astype(np.float64))
    check(got, ref, distance_tolerance(metric, ref, dtype), metric)


def test_cosine_of_a_zero_row(ctx):
    x = np.array([[0.0, 0.0], [1.0, 2.0]])
    np.testing.assert_array_equal(ctx.pairwise_distances(x, metric="cosine")[0], [1.0, 1.0])
    np.testing.assert_array_equal(ctx.pairwise_kernels(x, metric="cosine")[0], [0.0, 0.0])


@pytest.mark.parametrize("metric", METRICS)
def test_distances_nan_and_inf(ctx, rng, dtype, metric):
    x, y = make(rng, "standardized", 40).astype(dtype), make(rng, "standardized", 30).astype(dtype)
    x[3, 5] = np.nan
    x[9, 0] = np.inf
    got = ctx.pairwise_distances(x, y, metric=metric)
    assert np.isnan(got[3]).all()
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        ref = exact_distance(metric, x64, y.astype(np.float64))
    rows = np.r_[0:3, 4:9, 10:40]
    check(got[rows], ref[rows], distance_tolerance(metric, ref[rows], dtype), metric)
    assert (np.isnan(got[9]) | (got[9] == ref[9])).all()


# -- kernel_matmul ------------------------------------------------------------------------------


def matmul_tolerance(metric, x, y, w, dtype, p):
    """gpukern.h: <= tol * sum_j |K~_ij| |w_jc|, K~ 1 for bounded kernels, else the kernel on |x|, |y|."""
    bound = np.ones((len(x), len(y))) if metric in BOUNDED else np.abs(
        exact_kernel(metric, np.abs(x), np.abs(y), p["gamma"], p["degree"], abs(p["coef0"]), p["nu"]))
    return RBF_TOL[dtype] * (bound @ np.abs(w).reshape(len(y), -1)).reshape((len(x),) + w.shape[1:])


@pytest.mark.parametrize("r", [None, 1, 16, 64, 65])
@pytest.mark.parametrize("data", DISTRIBUTIONS)
@pytest.mark.parametrize("metric", KERNELS)
def test_kernel_matmul(ctx, rng, dtype, metric, data, r):
    m, n = 1000, 1025
    x, y = make(rng, data, m).astype(dtype), make(rng, data, n).astype(dtype)
    w = rng.standard_normal(n if r is None else (n, r)).astype(dtype)
    p = params(metric, D)
    got = ctx.kernel_matmul(x, y, w, metric=metric, **p)
    assert got.shape == ((m,) if r is None else (m, r)) and got.dtype == dtype
    x64, y64, w64 = x.astype(np.float64), y.astype(np.float64), w.astype(np.float64)
    k = exact_kernel(metric, x64, y64, float(dtype(p["gamma"])), p["degree"], p["coef0"], p["nu"])
    check(got, k @ w64, matmul_tolerance(metric, x64, y64, w64, dtype, p), metric)


@pytest.mark.parametrize("shape", [(1, 1), (7, 1025), (1025, 7)], ids=str)
def test_kernel_matmul_sizes_and_y_none(ctx, rng, dtype, kind, shape):
    m, n = shape
    x = make(rng, "clustered", m).astype(dtype)
    w = rng.standard_normal((m, 3)).astype(dtype)
    got = fetch(ctx.kernel_matmul(put(ctx, x, kind), None, put(ctx, w, kind), gamma=0.1), kind)
    x64 = x.astype(np.float64)
    ref = np.exp(-float(dtype(0.1)) * cdist(x64, x64, "sqeuclidean")) @ w.astype(np.float64)
    check(got, ref, matmul_tolerance("rbf", x64, x64, w.astype(np.float64), dtype, {"gamma": 0.1}), "rbf")
    y = make(rng, "clustered", n).astype(dtype)
    v = rng.standard_normal((n, 3)).astype(dtype)
    np.testing.assert_allclose(fetch(ctx.kernel_matmul(put(ctx, x, kind), put(ctx, y, kind), put(ctx, v, kind)),
                                     kind),
                               np.asarray(ctx.pairwise_kernels(x, y)).astype(np.float64) @ v,
                               atol=10 * RBF_TOL[dtype] * n, rtol=0)


def test_kernel_matmul_with_one_column_is_rbf_matvec(ctx, rng, dtype):
    x, y = make(rng, "standardized", 300).astype(dtype), make(rng, "standardized", 200).astype(dtype)
    w = rng.standard_normal(200).astype(dtype)
    got = ctx.kernel_matmul(x, y, w, gamma=0.05)
    np.testing.assert_allclose(got, ctx.rbf_matvec(x, y, w, gamma=0.05), atol=2 * RBF_TOL[dtype] * np.abs(w).sum())
    np.testing.assert_allclose(ctx.kernel_matmul(x, y, w[:, None], gamma=0.05)[:, 0], got,
                               atol=2 * RBF_TOL[dtype] * np.abs(w).sum())


# -- k nearest neighbours -----------------------------------------------------------------------


def check_knn(dist, index, x, y, k, metric, dtype):
    """gpukern.h's k-NN contract: each distance within the distance contract of the true k
    smallest, each index at the distance returned for it, distinct, nearest first. (Rounded
    float32 distances may be equal where the true ones differ: ties are checked on exact
    duplicates, test_kneighbors_ties_and_identical_rows.)"""
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    full = exact_distance(metric, x64, y64)
    true_k = np.sort(full, axis=1)[:, :k]
    tol = distance_tolerance(metric, true_k, dtype)
    assert dist.shape == index.shape == (len(x), k)
    assert index.dtype == np.int64 and dist.dtype == dtype
    check(dist, true_k, tol, "knn dist")
    assert ((index >= 0) & (index < len(y))).all()
    at = np.take_along_axis(full, index, axis=1)
    check(at, true_k, 2 * tol, "knn index")
    assert all(len(set(row)) == k for row in index.tolist())
    assert (np.diff(dist, axis=1) >= 0).all()


@pytest.mark.parametrize("shape", [(1, 1), (7, 1), (1000, 7), (1025, 1000), (7, 1025)], ids=str)
@pytest.mark.parametrize("data", DISTRIBUTIONS)
@pytest.mark.parametrize("metric", METRICS)
def test_kneighbors(ctx, rng, dtype, metric, data, shape):
    m, n = shape
    x, y = make(rng, data, m).astype(dtype), make(rng, data, n).astype(dtype)
    for k in sorted({1, min(10, n), n}):
        dist, index = ctx.kneighbors(x, y, k, metric=metric)
        assert type(dist) is np.ndarray and type(index) is np.ndarray
        check_knn(dist, index, x, y, k, metric, dtype)


@pytest.mark.parametrize("metric", METRICS)
def test_kneighbors_matches_scikit_learn(ctx, rng, metric):
    x, y = make(rng, "clustered", 300), make(rng, "clustered", 500)
    nn = NearestNeighbors(algorithm="brute", metric={"sqeuclidean": "euclidean"}.get(metric, metric)).fit(y)
    ref_dist, ref_index = nn.kneighbors(x, 10)
    if metric == "sqeuclidean":
        ref_dist = ref_dist**2
    dist, index = ctx.kneighbors(x, y, 10, metric=metric)
    np.testing.assert_allclose(dist, ref_dist, rtol=1e-9, atol=1e-12)
    # Clustered float64 data has no ties within 1e-9: the same neighbours in the same order.
    np.testing.assert_array_equal(index, ref_index)


def test_kneighbors_beyond_2048(ctx, rng, dtype):
    # No cap on k (faiss#2103: GPU k-NN stops at 2048).
    x, y = make(rng, "standardized", 5).astype(dtype), make(rng, "standardized", 3000).astype(dtype)
    dist, index = ctx.kneighbors(x, y, 2500)
    check_knn(dist, index, x, y, 2500, "euclidean", dtype)


@pytest.mark.parametrize("data", DISTRIBUTIONS)
def test_kneighbors_ties_and_identical_rows(ctx, rng, dtype, kind, data):
    # y holds each row twice: every distance is tied, the smaller index first; each row of x is
    # a row of y, found at distance 0.
    half = make(rng, data, 600).astype(dtype)
    y = np.concatenate([half, half])
    x = half[::3]
    dist, index = ctx.kneighbors(put(ctx, x, kind), put(ctx, y, kind), 4)
    dist, index = fetch(dist, kind), fetch(index, kind)
    check_knn(dist, index, x, y, 4, "euclidean", dtype)
    assert (dist[:, :2] == 0).all()
    np.testing.assert_array_equal(index[:, 0], np.arange(0, 600, 3))
    np.testing.assert_array_equal(index[:, 1], np.arange(0, 600, 3) + 600)
    assert (index[:, 3] - index[:, 2] == 600).all()


def test_kneighbors_returns_arrays_for_arrays(ctx, rng):
    x = make(rng, "standardized", 20)
    dist, index = ctx.kneighbors(ctx.asarray(x), ctx.asarray(x), 3)
    assert type(dist) is gpukern.Array and type(index) is gpukern.Array
    assert index.dtype == np.int64 and index.shape == (20, 3) and index.device == dist.device
    ref_dist, ref_index = ctx.kneighbors(x, x, 3)
    np.testing.assert_array_equal(index.get(), ref_index)
    np.testing.assert_array_equal(np.asarray(dist), ref_dist)
    assert isinstance(index[0, 1].item(), int)
    copy = index.copy()
    assert copy.dtype == np.int64
    np.testing.assert_array_equal(copy.get(), ref_index)


def test_index_arrays_export_as_int64(cpu, rng):
    x = make(rng, "standardized", 10)
    _, index = cpu.kneighbors(cpu.asarray(x), cpu.asarray(x), 2)
    shared = np.from_dlpack(index)
    assert shared.dtype == np.int64
    np.testing.assert_array_equal(shared, index.get())
    view = np.asarray(index)
    assert view.dtype == np.int64 and np.shares_memory(view, shared)


# -- out=, Arrays, the module-level functions ----------------------------------------------------


def test_out(ctx, rng, dtype):
    x, y = make(rng, "standardized", 30).astype(dtype), make(rng, "standardized", 20).astype(dtype)
    out = np.empty((30, 20), dtype)
    assert ctx.pairwise_kernels(x, y, metric="laplacian", out=out) is out
    np.testing.assert_array_equal(out, ctx.pairwise_kernels(x, y, metric="laplacian"))
    assert ctx.pairwise_distances(x, y, out=out) is out
    np.testing.assert_array_equal(out, ctx.pairwise_distances(x, y))
    w = rng.standard_normal((20, 4)).astype(dtype)
    res = ctx.empty((30, 4), dtype)
    assert ctx.kernel_matmul(x, y, w, metric="sigmoid", out=res) is res
    np.testing.assert_array_equal(res.get(), ctx.kernel_matmul(x, y, w, metric="sigmoid"))
    strided = np.empty((30, 40), dtype)[:, ::2]
    assert ctx.pairwise_distances(x, y, metric="manhattan", out=strided) is strided
    np.testing.assert_array_equal(strided, ctx.pairwise_distances(x, y, metric="manhattan"))


def test_arrays_in_arrays_out(ctx, rng, dtype):
    x, y = make(rng, "clustered", 30).astype(dtype), make(rng, "clustered", 20).astype(dtype)
    a, b = ctx.asarray(x), ctx.asarray(y)
    for metric in KERNELS:
        k = ctx.pairwise_kernels(a, b, metric=metric)
        assert type(k) is gpukern.Array and k.dtype == dtype
        np.testing.assert_array_equal(k.get(), ctx.pairwise_kernels(x, y, metric=metric))
    for metric in METRICS:
        d = ctx.pairwise_distances(a, b, metric=metric)
        assert type(d) is gpukern.Array
        np.testing.assert_array_equal(d.get(), ctx.pairwise_distances(x, y, metric=metric))
    kw = ctx.kernel_matmul(a, b, ctx.asarray(np.ones((20, 2), dtype)))
    assert type(kw) is gpukern.Array and kw.shape == (30, 2)


def test_module_level_functions(rng):
    x, y = make(rng, "standardized", 12), make(rng, "standardized", 9)
    with gpukern.Context("auto") as ctx:
        np.testing.assert_array_equal(gpukern.pairwise_kernels(x, y, "polynomial", 0.3, 2, 0.5),
                                      ctx.pairwise_kernels(x, y, "polynomial", 0.3, 2, 0.5))
        np.testing.assert_array_equal(gpukern.pairwise_distances(x, y, "cosine"),
                                      ctx.pairwise_distances(x, y, "cosine"))
        got, ref = gpukern.kneighbors(x, y, 4), ctx.kneighbors(x, y, 4)
        np.testing.assert_array_equal(got[0], ref[0])
        np.testing.assert_array_equal(got[1], ref[1])
    with pytest.raises(gpukern.InvalidParameterError, match="'gamma' parameter of pairwise_kernels"):
        gpukern.pairwise_kernels(x, gamma=-1.0)


def test_module_level_functions_compute_where_the_arrays_are(cpu, rng):
    x = make(rng, "standardized", 12)
    a = cpu.asarray(x)
    k = gpukern.pairwise_kernels(a)
    assert type(k) is gpukern.Array and k.context is cpu
    dist, index = gpukern.kneighbors(x, a, 2)
    assert dist.context is cpu and index.context is cpu
    out = cpu.empty((12, 12), np.float64)
    assert gpukern.pairwise_distances(x, out=out) is out
