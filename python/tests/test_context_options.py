# SPDX-License-Identifier: MIT
"""Context's options (device, cpu_threads, allow_tf32) and gpukern.device_count()."""

import numpy as np
import pytest

import gpukern

needs_cuda = pytest.mark.skipif("cuda" not in gpukern.available_backends(), reason="no usable CUDA device")
needs_device_count = pytest.mark.skipif(
    not hasattr(gpukern._base.LIB, "gk_device_count"),
    reason="libgpukern %s predates gk_device_count (1.2)" % gpukern.library_version,
)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_cpu_threads_reach_the_cpu_backend(threads):
    with gpukern.Context("cpu", cpu_threads=threads) as ctx:
        assert ctx.cpu_threads == threads
        assert ctx.device_name == "CPU (%d thread%s)" % (threads, "" if threads == 1 else "s")
        assert "cpu_threads=%d" % threads in repr(ctx)
        x = np.arange(100000, dtype=np.float64)
        assert ctx.sum(x) == x.sum()


def test_default_options():
    with gpukern.Context("cpu") as ctx:
        assert ctx.cpu_threads is None and ctx.allow_tf32 is False
        assert "cpu_threads" not in repr(ctx) and "allow_tf32" not in repr(ctx)


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        ({"cpu_threads": 0}, ValueError, ["cpu_threads", "[1,", "got 0"]),
        ({"cpu_threads": -4}, ValueError, ["cpu_threads", "got -4"]),
        ({"cpu_threads": 2**31}, ValueError, ["cpu_threads", str(2**31)]),
        ({"cpu_threads": 2.0}, TypeError, ["cpu_threads", "float"]),
        ({"cpu_threads": True}, TypeError, ["cpu_threads", "True"]),
        ({"cpu_threads": "4"}, TypeError, ["cpu_threads", "str"]),
        ({"device": -1}, ValueError, ["device", "got -1"]),
        ({"device": 2**31}, ValueError, ["device", str(2**31)]),
        ({"device": 0.0}, TypeError, ["device", "float"]),
        ({"allow_tf32": 1}, TypeError, ["allow_tf32", "1"]),
        ({"allow_tf32": "yes"}, TypeError, ["allow_tf32", "'yes'"]),
        ({"backend": "gpu"}, ValueError, ["backend", "'gpu'", "cuda"]),
    ],
)
def test_bad_options_are_refused_before_any_c_call(kwargs, error, words):
    with pytest.raises(error) as e:
        gpukern.Context(**dict({"backend": "cpu"}, **kwargs))
    for w in words:
        assert w in str(e.value)


def test_numpy_integers_and_bools_are_accepted():
    with gpukern.Context("cpu", device=np.int64(0), cpu_threads=np.int32(2), allow_tf32=np.bool_(True)) as ctx:
        assert ctx.cpu_threads == 2 and ctx.allow_tf32 is True
        assert "allow_tf32=True" in repr(ctx)


@needs_device_count
def test_device_count():
    assert gpukern.device_count("cpu") == 1
    n = gpukern.device_count()
    assert n == gpukern.device_count("cuda")
    assert (n > 0) == ("cuda" in gpukern.available_backends())
    with gpukern.Context("auto") as ctx:
        assert gpukern.device_count("auto") == gpukern.device_count(ctx.backend)
    with pytest.raises(ValueError, match="'gpu'"):
        gpukern.device_count("gpu")


@needs_device_count
def test_cpu_has_device_zero_only():
    with pytest.raises(gpukern.GpukernError) as e:
        gpukern.Context("cpu", device=1)
    assert e.value.status == gpukern.Status.INVALID_ARGUMENT


@needs_device_count
@needs_cuda
def test_device_past_the_count_is_an_invalid_argument():
    n = gpukern.device_count()
    with gpukern.Context("cuda", device=n - 1) as ctx:
        assert ctx.backend == "cuda"
    with pytest.raises(gpukern.GpukernError) as e:
        gpukern.Context("cuda", device=n)
    assert e.value.status == gpukern.Status.INVALID_ARGUMENT
    assert str(n) in str(e.value)


@needs_cuda
def test_allow_tf32_changes_float32_gemm_rounding_on_cuda(rng):
    # TF32 keeps 10 mantissa bits of each operand: a float32 product of K = 4096 terms drifts
    # about 1e-3 relative from the exact one, true float32 about 1e-6.
    a = rng.standard_normal((512, 4096)).astype(np.float32)
    b = rng.standard_normal((4096, 512)).astype(np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(exact).max()
    errors = {}
    for tf32 in (False, True):
        with gpukern.Context("cuda", allow_tf32=tf32) as ctx:
            errors[tf32] = np.abs(ctx.matmul(a, b) - exact).max() / scale
    assert errors[False] < 1e-5
    assert 10 * errors[False] < errors[True] < 1e-2
