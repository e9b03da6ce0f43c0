# SPDX-License-Identifier: MIT
"""The counter-based random streams: exactly the documented Philox mapping, on every backend."""

import math

import numpy as np
import pytest

import reference
from reference import fetch


def test_philox_reference_known_answer():
    # Salmon et al., SC'11: counter 0, key 0.
    words = reference.philox4x32_10([0], 0)
    assert [int(w[0]) for w in words] == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]


@pytest.mark.parametrize("seed,offset", [(0, 0), (42, 3), (2**64 - 1, 2**40 + 1), (123456789, 2**32 - 5)])
@pytest.mark.parametrize("n", [1, 5, 1001])
def test_uniform_is_the_documented_stream(ctx, dtype, seed, offset, n):
    got = ctx.uniform(n, seed, offset, dtype=dtype).get()
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, reference.uniform(n, seed, offset, dtype))
    assert ((got >= 0) & (got < 1)).all()


@pytest.mark.parametrize("seed,offset", [(0, 0), (7, 1), (2**63 + 11, 2**33 + 3)])
def test_normal_is_the_documented_stream(ctx, dtype, seed, offset):
    n = 4099
    mean, std = -1.5, 2.5
    got = ctx.normal(n, seed, offset, mean=mean, std=std, dtype=dtype).get()
    assert got.dtype == dtype
    ref, radius = reference.normal(n, seed, offset, mean, std, dtype)
    # The backend computes in the dtype: the angle's rounding moves r*cos(theta) by about
    # eps * 2*pi * r, on top of a few ulp in log, sqrt and cos.
    eps = np.finfo(dtype).eps
    tol = 16 * eps * std * np.maximum(radius, 1.0) + 4 * np.spacing(np.abs(ref).astype(dtype))
    assert (np.abs(got - ref) <= tol).all()


def test_streams_split_into_any_calls(ctx, dtype):
    n = 1000
    whole_u = ctx.uniform(n, 5, 17, dtype=dtype).get()
    whole_n = ctx.normal(n, 5, 17, dtype=dtype).get()
    cuts = [0, 1, 2, 7, 333, 999, n]
    for lo, hi in zip(cuts, cuts[1:]):
        np.testing.assert_array_equal(ctx.uniform(hi - lo, 5, 17 + lo, dtype=dtype).get(), whole_u[lo:hi])
        np.testing.assert_array_equal(ctx.normal(hi - lo, 5, 17 + lo, dtype=dtype).get(), whole_n[lo:hi])


def test_shape_and_out(ctx, dtype, kind):
    a = ctx.uniform((3, 4, 5), 1, dtype=dtype)
    assert a.shape == (3, 4, 5) and a.dtype == dtype
    flat = reference.uniform(60, 1, 0, dtype)
    np.testing.assert_array_equal(a.get(), flat.reshape(3, 4, 5))
    out = np.zeros((6, 10), dtype) if kind == "ndarray" else ctx.empty((6, 10), dtype)
    assert ctx.uniform((6, 10), 1, out=out, dtype=dtype) is out
    np.testing.assert_array_equal(fetch(out, kind).ravel(), flat)
    # A non-contiguous ndarray target is filled through a copy.
    strided = np.zeros((60, 2), dtype)[:, 0]
    ctx.normal(60, 1, dtype=dtype, out=strided)
    np.testing.assert_array_equal(strided, ctx.normal(60, 1, dtype=dtype).get())


def test_moments(ctx, dtype):
    n = 10**6
    u = ctx.uniform(n, 2024, dtype=dtype).get().astype(np.float64)
    assert abs(u.mean() - 0.5) < 5 * math.sqrt(1 / 12 / n)
    assert abs(u.var() - 1 / 12) < 0.002
    z = ctx.normal(n, 2024, mean=3.0, std=2.0, dtype=dtype).get().astype(np.float64)
    assert abs(z.mean() - 3.0) < 5 * 2.0 / math.sqrt(n)
    assert abs(z.std() - 2.0) < 0.01
    # Kolmogorov-Smirnov against the normal CDF; 1.95 / sqrt(n) is the 0.1% critical value.
    s = np.sort((z - 3.0) / 2.0)
    cdf = 0.5 * (1 + np.vectorize(math.erf)(s / math.sqrt(2)))
    k = np.arange(1, n + 1) / n
    d = max(np.max(k - cdf), np.max(cdf - (k - 1 / n)))
    assert d < 1.95 / math.sqrt(n)
