# SPDX-License-Identifier: MIT
"""NumPy references and the numerical contract's tolerances, for the tests."""

import math

import numpy as np

import gpukern

_MASK = 0xFFFFFFFF
_M0 = np.uint64(0xD2511F53)
_M1 = np.uint64(0xCD9E8D57)
_W0 = 0x9E3779B9
_W1 = 0xBB67AE85

# Per-dtype tolerances of the numerical contract (docs/DESIGN.md).
REDUCTION_TOL = {np.float32: 1e-6, np.float64: 1e-13}
GEMM_TOL = {np.float32: 1e-5, np.float64: 1e-13}
RBF_TOL = {np.float32: 1e-5, np.float64: 1e-12}


def put(ctx, a, kind):
    """a as the kind of operand a test runs with: the ndarray itself, or a context Array."""
    return a if kind == "ndarray" else ctx.asarray(a)


def fetch(result, kind):
    """The result as an ndarray, after checking it is the kind its operands asked for."""
    if kind == "ndarray":
        assert type(result) is np.ndarray
        return result
    assert type(result) is gpukern.Array
    return result.get()


def philox4x32_10(blocks, seed):
    """Philox4x32-10 words x0..x3 (uint64 arrays of 32-bit values) for counters `blocks`."""
    blocks = np.asarray(blocks, dtype=np.uint64)
    c0 = blocks & np.uint64(_MASK)
    c1 = blocks >> np.uint64(32)
    c2 = np.zeros_like(blocks)
    c3 = np.zeros_like(blocks)
    k0, k1 = seed & _MASK, seed >> 32
    for _ in range(10):
        p0 = _M0 * c0
        p1 = _M1 * c2
        hi0, lo0 = p0 >> np.uint64(32), p0 & np.uint64(_MASK)
        hi1, lo1 = p1 >> np.uint64(32), p1 & np.uint64(_MASK)
        c0, c1, c2, c3 = hi1 ^ c1 ^ np.uint64(k0), lo1, hi0 ^ c3 ^ np.uint64(k1), lo0
        k0 = (k0 + _W0) & _MASK
        k1 = (k1 + _W1) & _MASK
    return c0, c1, c2, c3


def _bits53(p, q):
    return ((p >> np.uint64(5)).astype(np.float64) * 2.0**26 + (q >> np.uint64(6)).astype(np.float64)) * 2.0**-53


def _pick(words, index):
    return np.choose(index.astype(np.intp), words)


def uniform(count, seed, offset, dtype):
    """The documented uniform stream, exactly."""
    e = np.arange(count, dtype=np.uint64) + np.uint64(offset)
    if dtype == np.float32:
        x = philox4x32_10(e // np.uint64(4), seed)
        word = _pick(x, e % np.uint64(4))
        return ((word >> np.uint64(8)).astype(np.float64) * 2.0**-24).astype(np.float32)
    x = philox4x32_10(e // np.uint64(2), seed)
    j = (e % np.uint64(2)).astype(np.intp)
    return _bits53(_pick(x, 2 * j), _pick(x, 2 * j + 1))


def normal(count, seed, offset, mean, std, dtype):
    """The documented normal stream in float64, and the Box-Muller radius of each element."""
    e = np.arange(count, dtype=np.uint64) + np.uint64(offset)
    if dtype == np.float32:
        x = philox4x32_10(e // np.uint64(4), seed)
        j = ((e % np.uint64(4)) // np.uint64(2)).astype(np.intp)
        u1 = ((_pick(x, 2 * j) >> np.uint64(8)).astype(np.float64) + 1.0) * 2.0**-24
        u2 = (_pick(x, 2 * j + 1) >> np.uint64(8)).astype(np.float64) * 2.0**-24
    else:
        x = philox4x32_10(e // np.uint64(2), seed)
        u1 = _bits53(x[0], x[1]) + 2.0**-53
        u2 = _bits53(x[2], x[3])
    r = np.sqrt(-2.0 * np.log(u1))
    theta = 2.0 * math.pi * u2
    z = np.where(e % np.uint64(2) == 0, r * np.cos(theta), r * np.sin(theta))
    return mean + std * z, r


def assert_within_ulps(got, ref, ulps, dtype):
    """|got - ref| <= ulps units in the last place of ref rounded to dtype."""
    got = np.asarray(got, dtype=np.float64)
    ref64 = np.asarray(ref, dtype=np.longdouble)
    allowed = ulps * np.spacing(np.abs(np.asarray(ref, dtype=dtype))).astype(np.longdouble)
    err = np.abs(got.astype(np.longdouble) - ref64)
    bad = ~(err <= allowed)
    assert not bad.any(), "%d of %d beyond %g ulp, worst at %d: got %r, ref %r" % (
        bad.sum(),
        bad.size,
        ulps,
        int(np.argmax(np.where(bad, err, 0))),
        got.ravel()[np.argmax(np.where(bad, err, 0).ravel())],
        ref64.ravel()[np.argmax(np.where(bad, err, 0).ravel())],
    )


def check_gemm(got, a, b, c0, alpha, beta, ta, tb, dtype):
    """The contract: ||C - C_ref||_F <= tol * (|alpha| |||A| |B|||_F + |beta| ||C0||_F)."""
    A = a.astype(np.longdouble).T if ta else a.astype(np.longdouble)
    B = b.astype(np.longdouble).T if tb else b.astype(np.longdouble)
    al, be = float(dtype(alpha)), float(dtype(beta))
    ref = al * (A @ B) + (be * c0.astype(np.longdouble) if c0 is not None else 0)
    scale = abs(al) * np.linalg.norm((np.abs(A) @ np.abs(B)).astype(np.float64))
    if c0 is not None:
        scale += abs(be) * np.linalg.norm(c0.astype(np.float64))
    err = np.linalg.norm((got.astype(np.longdouble) - ref).astype(np.float64))
    assert err <= GEMM_TOL[dtype] * scale, (err, scale)
