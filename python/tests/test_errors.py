# SPDX-License-Identifier: MIT
"""Failed C calls become GpukernError with the C status and message; Python-side checks come first."""

import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import gpukern
from gpukern import _core

STATUS_VALUES = {
    "OK": 0, "INVALID_ARGUMENT": 1, "SHAPE": 2, "DTYPE": 3, "CONTEXT_MISMATCH": 4,
    "OUT_OF_MEMORY": 5, "OVERFLOW": 6, "BACKEND_UNAVAILABLE": 7, "UNSUPPORTED": 8, "DEVICE": 9,
    "INTERNAL": 10,
}


def test_status_enum_matches_the_header():
    assert {s.name: int(s) for s in gpukern.Status} == STATUS_VALUES
    for s in gpukern.Status:
        name = _core.LIB.gk_status_string(s).decode()
        assert name.startswith("GK_OK" if s == 0 else "GK_E_" + s.name), name
    assert _core.LIB.gk_status_string(12345)  # never NULL, also for unknown codes


def test_context_mismatch(dtype):
    with gpukern.Context("cpu") as a, gpukern.Context("cpu") as b:
        x, y = a.asarray(np.ones(3, dtype)), b.asarray(np.ones(3, dtype))
        with pytest.raises(gpukern.GpukernError) as e:
            a.add(x, y)
        assert e.value.status is gpukern.Status.CONTEXT_MISMATCH
        assert "gk_add" in str(e.value)
        assert str(e.value) == e.value.message == _core.LIB.gk_last_error().decode()
        with pytest.raises(gpukern.GpukernError) as e:
            b.sum(x)
        assert e.value.status == gpukern.Status.CONTEXT_MISMATCH
        again = pickle.loads(pickle.dumps(e.value))
        assert (again.status, str(again)) == (e.value.status, str(e.value))


def test_outputs_overlapping_inputs_are_rejected_by_the_library(ctx):
    a = ctx.asarray(np.ones((4, 4), np.float32))
    with pytest.raises(gpukern.GpukernError) as e:
        ctx.gemm(a, a, a, beta=1.0)
    assert e.value.status == gpukern.Status.INVALID_ARGUMENT
    x = ctx.asarray(np.ones((4, 1), np.float32))
    k = ctx.asarray(np.ones(4, np.float32))
    with pytest.raises(gpukern.GpukernError) as e:
        ctx.rbf_matvec(x, x, k, 1.0, out=k)
    assert e.value.status == gpukern.Status.INVALID_ARGUMENT


def test_overflowing_random_range(ctx):
    with pytest.raises(gpukern.GpukernError) as e:
        ctx.uniform(10, 1, offset=2**64 - 5)
    assert e.value.status == gpukern.Status.OVERFLOW
    assert str(e.value)


def test_impossible_allocation_is_out_of_memory_and_the_context_survives(ctx):
    with pytest.raises(gpukern.GpukernError) as e:
        ctx.empty(2**60, np.float32)  # 4 EiB: fits size_t, no machine has it
    assert e.value.status in (gpukern.Status.OUT_OF_MEMORY, gpukern.Status.OVERFLOW)
    np.testing.assert_array_equal(ctx.add(np.ones(2), np.ones(2)), [2, 2])


def test_unavailable_cuda():
    if "cuda" in gpukern.available_backends():
        with pytest.raises(gpukern.GpukernError) as e:
            gpukern.Context("cuda", device=10**6)
        assert e.value.status in (gpukern.Status.BACKEND_UNAVAILABLE, gpukern.Status.INVALID_ARGUMENT,
                                  gpukern.Status.DEVICE)
    else:
        with pytest.raises(gpukern.GpukernError) as e:
            gpukern.Context("cuda")
        assert e.value.status == gpukern.Status.BACKEND_UNAVAILABLE
    assert str(e.value)


def test_closed_context(dtype):
    ctx = gpukern.Context("cpu")
    a = ctx.asarray(np.arange(3, dtype=dtype))
    ctx.close()
    ctx.close()  # idempotent
    with pytest.raises(ValueError):
        ctx.add(a, a)
    with pytest.raises(ValueError):
        ctx.asarray(np.ones(3))
    with pytest.raises(ValueError):
        ctx.uniform(3, 1)
    # Arrays keep the C context alive: their data stays readable.
    np.testing.assert_array_equal(a.get(), [0, 1, 2])
    assert "closed" in repr(ctx)


def _forbid_c_calls(monkeypatch):
    def fail(*args):
        raise AssertionError("a C function was called")

    for name in dir(_core):
        if name.startswith("_gk_"):
            monkeypatch.setattr(_core, name, fail)


def test_python_side_errors_come_before_any_c_call(ctx, monkeypatch):
    f = np.ones(4, np.float32)
    a = ctx.asarray(f)
    b = ctx.asarray(np.ones(5, np.float32))
    d = ctx.asarray(np.ones(4, np.float64))
    _forbid_c_calls(monkeypatch)
    for call, error in [
        (lambda: ctx.add(a, b), ValueError),
        (lambda: ctx.add(a, d), TypeError),
        (lambda: ctx.sub(f, np.ones(4, np.int32)), TypeError),
        (lambda: ctx.mul(f, np.ones(3, np.float32)), ValueError),
        (lambda: ctx.dot(a, b), ValueError),
        (lambda: ctx.axpy(1.0, a, b), ValueError),
        (lambda: ctx.gemm(f.reshape(2, 2), f.reshape(1, 4)), ValueError),
        (lambda: ctx.rbf_matrix(f.reshape(2, 2), f.reshape(4, 1), 1.0), ValueError),
        (lambda: ctx.exp(a, out=b), ValueError),
        (lambda: ctx.normal(4, 1, dtype=np.int16), TypeError),
    ]:
        with pytest.raises(error):
            call()


def test_gk_log_prints_python_side_refusals_once():
    code = ("import numpy as np, gpukern\n"
            "ctx = gpukern.Context('cpu')\n"
            "a = ctx.asarray(np.ones(3, np.float32))\n"
            "for f in (lambda: a + ctx.asarray(np.ones(2, np.float32)),\n"
            "          lambda: ctx.rbf_matrix(np.ones((2, 2)), gamma=-1)):\n"
            "    try:\n"
            "        f()\n"
            "    except ValueError:\n"
            "        pass\n")
    env = dict(os.environ, GK_LOG="1")
    err = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stderr
    lines = [line for line in err.splitlines() if line.startswith("gpukern: python: ")]
    assert len(lines) == 2, err  # the operator's refusal once, not again by the Context method it calls
    assert lines[0].startswith("gpukern: python: Array.__add__: ValueError: shapes (3,) and (2,) differ")
    assert lines[1].startswith("gpukern: python: Context.rbf_matrix: InvalidParameterError: The 'gamma'")
    env.pop("GK_LOG")
    quiet = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stderr
    assert "gpukern:" not in quiet
