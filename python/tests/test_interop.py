# SPDX-License-Identifier: MIT
"""Zero-copy interop: NumPy through __array_interface__ and DLPack on the CPU, torch and CuPy
through DLPack and __cuda_array_interface__ on CUDA, and every error case."""

import ctypes
import gc

import numpy as np
import pytest

import gpukern
from gpukern import _dlpack


def address(a):
    if a.device == "cpu":
        return a.__array_interface__["data"][0]
    return a.__cuda_array_interface__["data"][0]


def capsule_name(capsule):
    get_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(("PyCapsule_GetName", ctypes.pythonapi))
    return get_name(capsule).decode()


class DLPackOnly:
    """A producer with only the DLPack protocol (as torch or JAX arrays are to gpukern)."""

    legacy = False

    def __init__(self, host, device=None):
        self.host = host
        self.device = device
        self.exported = 0

    def __dlpack_device__(self):
        return self.device if self.device is not None else self.host.__dlpack_device__()

    def __dlpack__(self, stream=None, max_version=None, **kwargs):
        assert self.device is None, "__dlpack__ called though the device is wrong"
        if self.legacy and max_version is not None:
            raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
        self.exported += 1
        return self.host.__dlpack__(stream=stream, **({} if max_version is None else {"max_version": max_version}))


class LegacyDLPack(DLPackOnly):
    """A producer of DLPack < 1.0, whose __dlpack__ has no max_version."""

    legacy = True


class InterfaceOnly:
    """A host array with only __array_interface__."""

    def __init__(self, host):
        self.host = host
        self.__array_interface__ = host.__array_interface__


class CudaInterfaceOnly:
    def __init__(self, shape=(3,), typestr="<f4", strides=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (0, False),
                                         "strides": strides, "version": 3, "stream": None}


# -- CPU: NumPy without copies ----------------------------------------------------------------------


def test_numpy_sees_cpu_arrays_without_a_copy(cpu, dtype):
    a = cpu.asarray(np.arange(12, dtype=dtype).reshape(3, 4), copy=True)
    views = [np.asarray(a), np.from_dlpack(a)]
    if np.lib.NumpyVersion(np.__version__) >= "2.0.0":  # numpy.asarray's copy= is NumPy 2's
        views.append(np.asarray(a, copy=False))
    for view in views:
        assert view.ctypes.data == address(a) and view.dtype == dtype and view.shape == (3, 4)
    v = np.asarray(a)
    v[1, 2] = -5  # the same memory: a write through NumPy is the Array's
    assert a[1, 2] == -5
    a += 1.0
    assert v[1, 2] == -4
    t = np.from_dlpack(a.T)
    assert t.ctypes.data == address(a) and t.strides == v.T.strides
    np.testing.assert_array_equal(t, v.T)
    row = np.asarray(a[2])
    assert row.ctypes.data == address(a) + 8 * a.itemsize


def test_exported_memory_outlives_the_array(cpu):
    a = cpu.asarray(np.arange(5.0), copy=True)
    views = [np.asarray(a), np.from_dlpack(a), np.asarray(a.T)]
    del a
    gc.collect()
    for v in views:
        np.testing.assert_array_equal(v, np.arange(5.0))


def test_capsules_legacy_and_versioned(cpu):
    a = cpu.asarray(np.ones(4, np.float32))
    before = len(_dlpack._exports)
    assert capsule_name(a.__dlpack__()) == "dltensor"
    assert capsule_name(a.__dlpack__(max_version=(1, 0))) == "dltensor_versioned"
    assert capsule_name(a.__dlpack__(max_version=(1, 3))) == "dltensor_versioned"
    assert capsule_name(a.__dlpack__(max_version=(0, 8))) == "dltensor"
    gc.collect()
    assert len(_dlpack._exports) == before  # unused capsules released their tensors
    consumed = np.from_dlpack(a)
    assert len(_dlpack._exports) == before + 1
    del consumed
    gc.collect()
    assert len(_dlpack._exports) == before  # the consumer called the deleter
    assert a.__dlpack_device__() == (1, 0)
    with pytest.raises(BufferError):
        a.__dlpack__(dl_device=(2, 0))
    with pytest.raises(BufferError):
        a.__dlpack__(stream=1)
    copied = _dlpack.Tensor(a.__dlpack__(copy=True))
    assert copied.data != address(a) and copied.shape == (4,)
    del copied
    gc.collect()
    assert len(_dlpack._exports) == before


def test_numpy_comes_in_without_a_copy(cpu, dtype):
    x = np.arange(6, dtype=dtype).reshape(2, 3)
    for a in (gpukern.from_dlpack(x), gpukern.from_dlpack(x, cpu), cpu.asarray(x), cpu.asarray(x, copy=False),
              gpukern.from_dlpack(DLPackOnly(x)), gpukern.from_dlpack(LegacyDLPack(x), cpu)):
        assert type(a) is gpukern.Array and address(a) == x.ctypes.data and a.shape == (2, 3)
        np.testing.assert_array_equal(a.get(), x)
    a = gpukern.from_dlpack(x)
    a *= 2.0
    np.testing.assert_array_equal(x, 2 * np.arange(6).reshape(2, 3))
    f = np.asfortranarray(np.arange(12, dtype=dtype).reshape(3, 4))
    t = cpu.asarray(f)
    assert address(t) == f.ctypes.data and t.strides == f.strides
    np.testing.assert_array_equal(t.get(), f)
    c = cpu.asarray(x, copy=True)
    assert address(c) != x.ctypes.data
    del x
    gc.collect()
    np.testing.assert_array_equal(a.get(), 2 * np.arange(6).reshape(2, 3))  # the Array keeps it alive


class _CountingLib:
    """The library with its gk_context_synchronize calls counted."""

    def __init__(self, lib):
        self._lib = lib
        self.syncs = 0

    def gk_context_synchronize(self, ch):
        self.syncs += 1
        return self._lib.gk_context_synchronize(ch)

    def __getattr__(self, name):
        return getattr(self._lib, name)


def test_foreign_out_is_complete_when_the_op_returns(cpu, rng, monkeypatch):
    # Its owner reads a foreign out= on its own stream, which DLPack cannot order after the
    # context's: the op must wait for its result (an own Array result stays asynchronous).
    from gpukern import _core

    counting = _CountingLib(_core.LIB)
    monkeypatch.setattr(_core, "LIB", counting)
    x = rng.uniform(-1, 1, (6, 3)).astype(np.float32)
    y = rng.uniform(-1, 1, (4, 3)).astype(np.float32)
    out = np.zeros((6, 4), np.float32)
    gx, gy = cpu.asarray(x), cpu.asarray(y)
    own = cpu.rbf_matrix(gx, gy)
    assert counting.syncs == 0
    foreign = DLPackOnly(out)
    assert cpu.rbf_matrix(gx, gy, out=foreign) is foreign
    assert counting.syncs == 1
    np.testing.assert_array_equal(out, own.get())
    cpu.axpy(1.0, gx, DLPackOnly(np.zeros((6, 3), np.float32)))
    assert counting.syncs == 2


def test_every_op_takes_foreign_arrays(cpu, rng, dtype):
    x = rng.uniform(-1, 1, (9, 4)).astype(dtype)
    y = rng.uniform(-1, 1, (5, 4)).astype(dtype)
    w = rng.uniform(-1, 1, 5).astype(dtype)
    for wrap in (DLPackOnly, InterfaceOnly):
        fx, fy, fw = wrap(x), wrap(y), wrap(w)
        r = cpu.rbf_matrix(fx, fy)
        assert type(r) is gpukern.Array  # outputs for foreign inputs are Arrays
        np.testing.assert_array_equal(r.get(), cpu.rbf_matrix(x, y))
        np.testing.assert_array_equal(cpu.rbf_matvec(fx, fy, fw).get(), cpu.rbf_matvec(x, y, w))
        np.testing.assert_array_equal(cpu.gemm(fx, fy, trans_b=True).get(), cpu.gemm(x, y, trans_b=True))
        np.testing.assert_array_equal(cpu.add(fx, fx).get(), x + x)
        assert cpu.sum(fw) == cpu.sum(w)
        np.testing.assert_array_equal((cpu.asarray(x) + fx).get(), x + x)
    out = np.zeros((9, 5), dtype)
    fo = DLPackOnly(out)
    assert cpu.rbf_matrix(x, y, out=fo) is fo  # written in place, returned as given
    np.testing.assert_array_equal(out, cpu.rbf_matrix(x, y))
    s = np.ones(3, dtype)
    assert cpu.scale(3.0, DLPackOnly(s)).host is s
    np.testing.assert_array_equal(s, 3.0)


def test_host_operands_come_through_numpys_import(cpu, rng, dtype, monkeypatch):
    # An operand from a host producer is read through numpy.from_dlpack (one C call) rather than
    # from_capsule's Python parsing: ctx.exp(torch tensor) of 16 elements 15 us instead of 19.
    from gpukern import _interop

    def refuse(*args, **kwargs):
        raise AssertionError("the path this test rules out")

    x = rng.uniform(-1, 1, (9, 4)).astype(dtype)
    y = rng.uniform(-1, 1, (5, 4)).astype(dtype)
    gc.collect()
    refs = __import__("sys").getrefcount(x)
    monkeypatch.setattr(_interop, "from_capsule", refuse)
    fx, fy, ff = DLPackOnly(x), DLPackOnly(y), DLPackOnly(np.asfortranarray(x))  # ff: a transposed layout
    with monkeypatch.context() as m:
        # exp and the element-wise ops then take Arrays' lean path (ctx.exp(tensor) 12 us, not 15).
        m.setattr(gpukern.Context, "_call", refuse)
        lean = [(cpu.exp(fx), cpu.exp(x)), (cpu.add(fx, fx), x + x), (cpu.mul(ff, ff), x * x)]
    for got, want in lean + [(cpu.rbf_matrix(fx, fy), cpu.rbf_matrix(x, y)), (cpu.matmul(ff, fy.host.T), x @ y.T)]:
        assert type(got) is gpukern.Array
        np.testing.assert_allclose(got.get(), want, rtol=1e-6 if dtype == np.float32 else 1e-13)
    del got, want, lean, fx, ff
    gc.collect()
    assert __import__("sys").getrefcount(x) == refs  # every import released


def test_read_only_inputs_are_read_but_not_wrapped_for_writing(cpu):
    x = np.ones(4, np.float32)
    x.flags.writeable = False
    try:
        x.__dlpack__(max_version=(1, 0))
    except (BufferError, TypeError):
        pytest.skip("NumPy %s cannot export read-only memory through DLPack" % np.__version__)
    np.testing.assert_array_equal(cpu.add(DLPackOnly(x), DLPackOnly(x)).get(), 2.0)
    with pytest.raises(BufferError, match="read-only"):
        gpukern.from_dlpack(x)
    c = cpu.asarray(x)  # copies instead
    assert address(c) != x.ctypes.data
    with pytest.raises(ValueError, match="copy"):
        cpu.asarray(x, copy=False)
    d = cpu.asarray(DLPackOnly(x))  # a read-only foreign array is copied too
    assert address(d) != x.ctypes.data
    np.testing.assert_array_equal(d.get(), x)
    with pytest.raises(BufferError, match="read-only"):
        cpu.asarray(DLPackOnly(x), copy=False)
    with pytest.raises((BufferError, ValueError), match="read-only"):
        cpu.add(x, x, out=DLPackOnly(x))


# -- errors, before any C call ----------------------------------------------------------------------


@pytest.mark.parametrize("bad", [np.int64, np.int32, np.uint8, np.float16, np.complex64, np.bool_])
def test_unsupported_dtypes_name_what_was_given_and_what_is_accepted(cpu, bad):
    x = np.ones(3, bad)
    for call in (lambda: gpukern.from_dlpack(x), lambda: cpu.add(DLPackOnly(x), DLPackOnly(x)),
                 lambda: cpu.asarray(DLPackOnly(x))):
        with pytest.raises((TypeError, BufferError)) as e:
            call()
        if e.type is TypeError:  # NumPy exports no DLPack for some dtypes (BufferError)
            assert np.dtype(bad).name in str(e.value) and "float32" in str(e.value)


def test_strides_the_c_api_cannot_address(cpu):
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    for strided in (x[::2], x[:, 1:3], x.reshape(2, 3, 4).transpose(1, 0, 2)):
        with pytest.raises(ValueError, match="strides") as e:
            gpukern.from_dlpack(strided)
        assert "contiguous" in str(e.value)
        # As operands they are copied, as strided ndarrays are (the same rule on a CPU context).
        got = cpu.add(DLPackOnly(strided), DLPackOnly(strided))
        assert type(got) is gpukern.Array
        np.testing.assert_array_equal(got.get(), strided + strided)
    with pytest.raises(ValueError, match="copy"):
        cpu.asarray(x[::2], copy=False)
    np.testing.assert_array_equal(cpu.asarray(x[::2]).get(), x[::2])  # copied


def test_other_devices_are_refused_before_export(cpu):
    x = np.ones(3, np.float32)
    for device, name in [((2, 0), "cuda:0"), ((2, 1), "cuda:1"), ((10, 0), "rocm:0"), ((8, 0), "metal:0")]:
        producer = DLPackOnly(x, device=device)
        for call in (lambda: gpukern.from_dlpack(producer, cpu), lambda: cpu.add(producer, x),
                     lambda: cpu.asarray(producer)):
            with pytest.raises(ValueError, match=name) as e:
                call()
            assert "cpu" in str(e.value) and "DLPackOnly" in str(e.value)
        assert producer.exported == 0
    with pytest.raises(ValueError, match="cuda"):
        cpu.add(CudaInterfaceOnly(), x)
    with pytest.raises(ValueError, match="rocm"):
        gpukern.from_dlpack(DLPackOnly(x, device=(10, 0)))


def test_non_arrays_are_type_errors(cpu):
    for bad in (object(), "abc", 3.0, [1.0, 2.0]):
        with pytest.raises(TypeError):
            gpukern.from_dlpack(bad)
        if not isinstance(bad, list):  # lists are array-likes to ops
            with pytest.raises(TypeError):
                cpu.exp(bad)


def test_capsules_not_consumed_by_a_failed_import_are_released(cpu):
    x = np.ones(3, np.int32)
    gc.collect()
    # NumPy counts the exports it has outstanding through the array's own reference count.
    refs = __import__("sys").getrefcount(x)
    for _ in range(10):
        with pytest.raises(TypeError):
            gpukern.from_dlpack(x)
    gc.collect()
    assert __import__("sys").getrefcount(x) == refs


# -- CUDA: torch and CuPy without copies --------------------------------------------------------------


@pytest.fixture
def cuda():
    if "cuda" not in gpukern.available_backends():
        pytest.skip("no CUDA backend here")
    with gpukern.Context("cuda") as c:
        yield c


def _torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    return torch


def _cupy():
    return pytest.importorskip("cupy")


def test_cuda_arrays_export_their_memory(cuda, dtype):
    a = cuda.asarray(np.arange(12, dtype=dtype).reshape(3, 4))
    cai = a.__cuda_array_interface__
    assert cai["version"] == 3 and cai["shape"] == (3, 4) and cai["data"][0] == address(a)
    assert cai["stream"] == cuda.stream
    assert a.__dlpack_device__() == (2, 0)
    with pytest.raises(AttributeError):
        a.__array_interface__
    with pytest.raises(ValueError, match="from_dlpack"):
        np.asarray(a, copy=False)
    np.testing.assert_array_equal(np.asarray(a), np.arange(12).reshape(3, 4))
    # Host arrays are staged by ops, but from_dlpack never copies.
    np.testing.assert_array_equal(cuda.add(DLPackOnly(np.ones(3)), np.ones(3)), 2.0)
    with pytest.raises(ValueError, match="cuda:0") as e:
        gpukern.from_dlpack(np.ones(3, np.float32), cuda)
    assert "cpu" in str(e.value)
    with pytest.raises(ValueError, match="cuda:1"):
        cuda.add(DLPackOnly(np.ones(3), device=(2, 1)), np.ones(3))


@pytest.mark.parametrize("lib", ["torch", "cupy"])
def test_torch_and_cupy_round_trip_without_copies(cuda, rng, lib):
    if lib == "torch":
        torch = _torch()
        put = lambda h: torch.from_numpy(h).cuda()  # noqa: E731
        ptr = lambda t: t.data_ptr()  # noqa: E731
        host = lambda t: t.cpu().numpy()  # noqa: E731
        take = torch.from_dlpack
    else:
        cp = _cupy()
        put = cp.asarray
        ptr = lambda t: t.data.ptr  # noqa: E731
        host = cp.asnumpy
        take = cp.from_dlpack
    x = rng.uniform(-1, 1, (300, 20)).astype(np.float32)
    y = rng.uniform(-1, 1, (200, 20)).astype(np.float32)
    w = rng.uniform(-1, 1, 200).astype(np.float32)
    tx, ty, tw = put(x), put(y), put(w)
    gx, gy, gw = cuda.asarray(x), cuda.asarray(y), cuda.asarray(w)
    assert address(gpukern.from_dlpack(tx)) == ptr(tx) and address(cuda.asarray(tx)) == ptr(tx)
    for got, ref in [(cuda.rbf_matrix(tx, ty), cuda.rbf_matrix(gx, gy)),
                     (cuda.gemm(tx, ty, trans_b=True), cuda.gemm(gx, gy, trans_b=True)),
                     (cuda.matmul(tx, ty.T), cuda.matmul(gx, gy.T)),
                     (cuda.rbf_matvec(tx, ty, tw), cuda.rbf_matvec(gx, gy, gw))]:
        assert type(got) is gpukern.Array
        back = take(got)
        assert ptr(back) == address(got)  # handed on without a copy
        np.testing.assert_array_equal(got.get(), ref.get())
        np.testing.assert_array_equal(host(back), ref.get())
    out = put(np.zeros((300, 200), np.float32))
    assert cuda.rbf_matrix(tx, ty, out=out) is out  # written in place
    np.testing.assert_array_equal(host(out), cuda.rbf_matrix(gx, gy).get())
    # Their transposes are transposed operands of gemm, without a copy.
    np.testing.assert_array_equal(cuda.matmul(tx.T, tx).get(), cuda.matmul(gx.T, gx).get())
    # Integer tensors, strided ones and the wrong device are refused with what is accepted.
    with pytest.raises(TypeError, match="int64"):
        cuda.add(put(np.arange(3)), put(np.arange(3)))
    with pytest.raises(ValueError, match="strides"):
        cuda.rbf_matrix(tx[::2], ty)


def test_streams(ctx, backend):
    if backend == "cpu":
        assert ctx.stream is None
        with pytest.raises(ValueError, match="CPU"):
            ctx.set_stream(1)
        return
    own = ctx.stream
    assert isinstance(own, int) and own
    a = ctx.asarray(np.arange(4.0))
    ctx.set_stream(1)  # the legacy default stream, ordered after the work queued before
    assert ctx.stream == 1
    b = a + a
    ctx.set_stream(None)
    assert ctx.stream == own
    np.testing.assert_array_equal(b.get(), 2 * np.arange(4.0))
    t = _torch()
    s = t.cuda.Stream()
    ctx.set_stream(s)
    assert ctx.stream == s.cuda_stream
    # torch's default stream (handle 0) is the legacy default stream, not the context's own
    ctx.set_stream(t.cuda.default_stream())
    assert ctx.stream == 1
    ctx.set_stream(None)


def test_cuda_array_interface_parsing(cpu):
    # The CUDA array interface's reading, on host memory (a CPU context wraps what it is given).
    from gpukern import _interop

    x = np.arange(12, dtype=np.float32).reshape(3, 4)

    def cai(a, **changes):
        d = dict(a.__array_interface__, version=3, stream=None)
        d.update(changes)
        return d

    a = _interop.from_cuda_interface(cpu, x, cai(x), "x")
    assert address(a) == x.ctypes.data and a.shape == (3, 4)
    t = _interop.from_cuda_interface(cpu, x.T, cai(x.T), "x")  # byte strides (4, 16): a transpose
    assert address(t) == x.ctypes.data and t.strides == x.T.strides
    np.testing.assert_array_equal(t.get(), x.T)
    with pytest.raises(ValueError, match="strides"):
        _interop.from_cuda_interface(cpu, x[:, ::2], cai(x[:, ::2]), "x")
    with pytest.raises(ValueError, match="strides"):
        _interop.from_cuda_interface(cpu, x, cai(x, strides=(16, 2)), "x")
    with pytest.raises(TypeError, match="int32"):
        _interop.from_cuda_interface(cpu, x, cai(x, typestr="<i4"), "x")
    with pytest.raises(TypeError, match="byte order"):
        _interop.from_cuda_interface(cpu, x, cai(x, typestr=">f4"), "x")
    with pytest.raises(ValueError, match="stream 0"):
        _interop.from_cuda_interface(cpu, x, cai(x, stream=0), "x")
    with pytest.raises(ValueError, match="masked"):
        _interop.from_cuda_interface(cpu, x, cai(x, mask=x), "x")
