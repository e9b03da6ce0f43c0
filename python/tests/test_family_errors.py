# SPDX-License-Identifier: MIT
"""The kernel family, distances and k-NN refuse bad input as scikit-learn does: every
parameter check and every operand check, once per backend."""

import math

import numpy as np
import pytest

import gpukern

KERNELS = ["rbf", "laplacian", "polynomial", "poly", "sigmoid", "linear", "cosine", "matern"]
METRICS = ["euclidean", "l2", "sqeuclidean", "manhattan", "l1", "cityblock", "cosine"]


def both(error):
    """scikit-learn's InvalidParameterError is both a ValueError and a TypeError."""
    assert issubclass(error, ValueError) and issubclass(error, TypeError)
    return error


@pytest.fixture
def x(rng):
    return rng.standard_normal((5, 3))


@pytest.mark.parametrize("metric", ["foo", "chi2", "additive_chi2", "precomputed", None, 3, np.exp])
def test_unknown_kernel(ctx, x, metric):
    with pytest.raises(both(gpukern.InvalidParameterError), match="'metric' parameter of pairwise_kernels"):
        ctx.pairwise_kernels(x, metric=metric)
    with pytest.raises(gpukern.InvalidParameterError, match="'metric' parameter of kernel_matmul"):
        ctx.kernel_matmul(x, x, x[:, 0], metric=metric)


@pytest.mark.parametrize("metric", ["foo", "chebyshev", "minkowski", "precomputed", None, np.subtract])
def test_unknown_metric(ctx, x, metric):
    with pytest.raises(gpukern.InvalidParameterError, match="'metric' parameter of pairwise_distances"):
        ctx.pairwise_distances(x, metric=metric)
    with pytest.raises(gpukern.InvalidParameterError, match="'metric' parameter of kneighbors"):
        ctx.kneighbors(x, x, 1, metric=metric)


def test_a_callable_metric_says_why(ctx, x):
    with pytest.raises(gpukern.InvalidParameterError, match="callables are not supported"):
        ctx.pairwise_distances(x, metric=lambda a, b: 0.0)


@pytest.mark.parametrize("metric", ["rbf", "laplacian", "polynomial", "sigmoid", "matern"])
@pytest.mark.parametrize("gamma", [-1, -1e-300, math.nan, math.inf, "scale", "auto", True, [1.0]])
def test_bad_gamma(ctx, x, metric, gamma):
    with pytest.raises(gpukern.InvalidParameterError, match="'gamma' parameter of pairwise_kernels must be a "
                       "float in the range [\\[(]0.0, inf\\) or None. Got"):
        ctx.pairwise_kernels(x, metric=metric, gamma=gamma)
    with pytest.raises(gpukern.InvalidParameterError, match="'gamma' parameter of kernel_matmul"):
        ctx.kernel_matmul(x, None, x, metric=metric, gamma=gamma)


def test_laplacian_gamma_must_be_positive_as_in_scikit_learn(ctx, x):
    with pytest.raises(gpukern.InvalidParameterError, match=r"range \(0.0, inf\)"):
        ctx.pairwise_kernels(x, metric="laplacian", gamma=0)
    assert (np.asarray(ctx.pairwise_kernels(x, metric="rbf", gamma=0)) == 1).all()


@pytest.mark.parametrize("degree", [0, -1, 33, 2.5, math.nan, math.inf, "3", None, True])
def test_bad_degree(ctx, x, degree):
    with pytest.raises(gpukern.InvalidParameterError, match=r"'degree' parameter of pairwise_kernels must be "
                       r"an integer in the range \[1, 32\]"):
        ctx.pairwise_kernels(x, metric="polynomial", degree=degree)


@pytest.mark.parametrize("metric", ["polynomial", "sigmoid"])
@pytest.mark.parametrize("coef0", [math.nan, math.inf, -math.inf, "1", None])
def test_bad_coef0(ctx, x, metric, coef0):
    with pytest.raises(gpukern.InvalidParameterError, match="'coef0' parameter of pairwise_kernels"):
        ctx.pairwise_kernels(x, metric=metric, coef0=coef0)


@pytest.mark.parametrize("nu", [1.0, 0.0, math.inf, math.nan, "1.5", None])
def test_bad_nu(ctx, x, nu):
    with pytest.raises(gpukern.InvalidParameterError, match="'nu' parameter of pairwise_kernels must be one of "
                       "0.5, 1.5 and 2.5"):
        ctx.pairwise_kernels(x, metric="matern", nu=nu)


def test_parameters_a_kernel_does_not_use_are_ignored(ctx, x):
    # scikit-learn's filter_params=True: linear reads no gamma, rbf no degree, and so on.
    lin = ctx.pairwise_kernels(x, metric="linear", gamma=-1, degree=0, coef0=math.nan, nu=7)
    np.testing.assert_allclose(np.asarray(lin), x @ x.T, rtol=1e-12, atol=1e-12)
    ctx.pairwise_kernels(x, metric="rbf", degree=0, coef0="x", nu=1)


@pytest.mark.parametrize("k, error, message", [
    (0, ValueError, r"expected k \(n_neighbors\) > 0. Got 0"),
    (-3, ValueError, r"expected k \(n_neighbors\) > 0. Got -3"),
    (6, ValueError, r"expected k \(n_neighbors\) <= n_samples_fit, but k = 6, n_samples_fit \(rows of y\) = 5"),
    (1.5, TypeError, "does not take float value, enter integer value"),
    (2.0, TypeError, "does not take float value"),
    ("2", TypeError, "does not take str value"),
    (True, TypeError, "does not take bool value"),
    (None, TypeError, "does not take NoneType value"),
])
def test_bad_k(ctx, x, k, error, message):
    with pytest.raises(error, match=message):
        ctx.kneighbors(x, x, k)


def test_numpy_integers_are_ks(ctx, x):
    dist, index = ctx.kneighbors(x, x, np.int32(2))
    assert dist.shape == index.shape == (5, 2)


def test_operands_must_be_matrices_with_one_width(ctx, x):
    for call in (lambda a: ctx.pairwise_kernels(a), lambda a: ctx.pairwise_distances(a),
                 lambda a: ctx.kneighbors(a, a, 1), lambda a: ctx.kernel_matmul(a, a, np.ones(len(a)))):
        with pytest.raises(ValueError, match=r"x must be 2-D, got shape \(3,\)"):
            call(x[0])
        with pytest.raises(ValueError, match=r"x must be 2-D, got shape \(1, 5, 3\)"):
            call(x[None])
    with pytest.raises(ValueError, match="x has 3 features per row but y has 2"):
        ctx.pairwise_kernels(x, x[:, :2])
    with pytest.raises(ValueError, match="x has 3 features per row but y has 2"):
        ctx.pairwise_distances(x, x[:, :2])
    with pytest.raises(ValueError, match="x has 3 features per row but y has 2"):
        ctx.kneighbors(x, x[:, :2], 1)


def test_weights_must_have_a_row_per_row_of_y(ctx, x):
    for w in (np.ones(4), np.ones((4, 2)), np.ones((5, 2, 1)), np.float64(1.0)):
        with pytest.raises(ValueError, match="w has shape .*, expected \\(5,\\) or \\(5, r\\)"):
            ctx.kernel_matmul(x, x, w)


def test_dtypes(ctx, x):
    with pytest.raises(TypeError, match="x is float64 but y is float32: gpukern does not promote"):
        ctx.pairwise_kernels(x, x.astype(np.float32))
    with pytest.raises(TypeError, match="x is float64 but w is float32"):
        ctx.kernel_matmul(x, x, np.ones(5, np.float32))
    with pytest.raises(TypeError, match="x is int64: gpukern has no integer"):
        ctx.pairwise_distances(np.ones((2, 2), np.int64))


def test_out_is_checked(ctx, x):
    with pytest.raises(ValueError, match=r"out has shape \(5, 4\), expected \(5, 5\)"):
        ctx.pairwise_kernels(x, out=np.empty((5, 4)))
    with pytest.raises(TypeError, match="out is float32 but the operands are float64"):
        ctx.pairwise_distances(x, out=np.empty((5, 5), np.float32))
    with pytest.raises(ValueError, match=r"out has shape \(5,\), expected \(5, 1\)"):
        ctx.kernel_matmul(x, x, np.ones((5, 1)), out=np.empty(5))
    with pytest.raises(ValueError, match="out is read-only"):
        ro = np.empty((5, 5))
        ro.flags.writeable = False
        ctx.pairwise_kernels(x, out=ro)


def test_lists_are_taken_as_scikit_learn_takes_them(ctx):
    rows = [[0.0, 1.0], [2.0, 3.5]]
    k = ctx.pairwise_kernels(rows, metric="linear")
    assert type(k) is np.ndarray
    np.testing.assert_array_equal(k, np.asarray(rows) @ np.asarray(rows).T)
    dist, index = ctx.kneighbors(rows, rows, 2)
    np.testing.assert_array_equal(index, [[0, 1], [1, 0]])


def test_closed_context(x):
    ctx = gpukern.Context("cpu")
    ctx.close()
    with pytest.raises(ValueError, match="closed gpukern.Context"):
        ctx.pairwise_distances(x)
    with pytest.raises(ValueError, match="closed gpukern.Context"):
        ctx.kneighbors(x, x, 1)
    with pytest.raises(ValueError, match="closed gpukern.Context"):
        ctx.kernel_matmul(x, x, x)


def test_index_arrays_are_not_computed_with(cpu, x):
    dist, index = cpu.kneighbors(cpu.asarray(x), cpu.asarray(x), 2)
    assert index.dtype == np.int64 and dist.dtype == np.float64
    with pytest.raises(gpukern.GpukernError) as e:
        index + index
    assert e.value.status == gpukern.Status.INVALID_ARGUMENT
    with pytest.raises(gpukern.GpukernError, match="int64|GK_INT64|dtype"):
        cpu.sum(index)
