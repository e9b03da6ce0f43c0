# SPDX-License-Identifier: MIT
"""DLPack's structs and capsules through ctypes: exporting Arrays and taking other arrays in.

The protocol (https://dmlc.github.io/dlpack/latest/python_spec.html): a producer's __dlpack__
returns a PyCapsule named "dltensor" (DLManagedTensor) or, when the consumer asked with
max_version >= (1, 0), "dltensor_versioned" (DLManagedTensorVersioned). A consumer that takes
the tensor renames the capsule "used_..." and calls the tensor's deleter when it is done; a
capsule that dies unused calls it from its destructor.
"""

import ctypes
from ctypes import (
    CFUNCTYPE,
    POINTER,
    PYFUNCTYPE,
    Structure,
    c_char_p,
    c_int,
    c_int32,
    c_int64,
    c_uint8,
    c_uint16,
    c_uint32,
    c_uint64,
    c_void_p,
    py_object,
    pythonapi,
)

KDL_CPU = 1
KDL_CUDA = 2
KDL_CUDA_HOST = 3
KDL_INT = 0
KDL_FLOAT = 2
FLAG_READ_ONLY = 1
#: The DLPack version of the versioned capsules exported here.
VERSION = (1, 0)

# Names are static: a capsule keeps the pointer to its name, not a copy.
_LEGACY = b"dltensor"
_VERSIONED = b"dltensor_versioned"
_USED_LEGACY = b"used_dltensor"
_USED_VERSIONED = b"used_dltensor_versioned"

_DEVICE_NAMES = {1: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal",
                 10: "rocm", 11: "rocm_host", 13: "cuda_managed", 14: "oneapi"}
_CODE_NAMES = {0: "int", 1: "uint", 2: "float", 3: "opaque_handle", 4: "bfloat", 5: "complex",
               6: "bool", 7: "float8"}


class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [
        ("data", c_void_p),
        ("device", DLDevice),
        ("ndim", c_int32),
        ("dtype", DLDataType),
        ("shape", POINTER(c_int64)),
        ("strides", POINTER(c_int64)),
        ("byte_offset", c_uint64),
    ]


_DELETER = CFUNCTYPE(None, c_void_p)


class DLManagedTensor(Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p), ("deleter", _DELETER)]


class DLPackVersion(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class DLManagedTensorVersioned(Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", c_void_p),
        ("deleter", _DELETER),
        ("flags", c_uint64),
        ("dl_tensor", DLTensor),
    ]


def _api(name, restype, *argtypes):
    # Own prototypes rather than argtypes set on ctypes.pythonapi's shared function objects,
    # which other code in the process may have declared differently.
    return PYFUNCTYPE(restype, *argtypes)((name, pythonapi))


_capsule_new = _api("PyCapsule_New", py_object, c_void_p, c_char_p, c_void_p)
_capsule_is_valid = _api("PyCapsule_IsValid", c_int, py_object, c_char_p)
_capsule_get_pointer = _api("PyCapsule_GetPointer", c_void_p, py_object, c_char_p)
_capsule_set_name = _api("PyCapsule_SetName", c_int, py_object, c_char_p)
# In the destructor the capsule arrives as a bare PyObject * (it is being freed).
_raw_is_valid = _api("PyCapsule_IsValid", c_int, c_void_p, c_char_p)
_raw_get_pointer = _api("PyCapsule_GetPointer", c_void_p, c_void_p, c_char_p)

# Exported tensors alive in a consumer: struct address -> (struct, shape, strides, Array).
# The entry keeps the Array (and so its memory) alive until the consumer calls the deleter.
_exports = {}


# The callbacks bind what they use as defaults: they may run after the module's globals are gone.
@_DELETER
def _export_deleter(address, _pop=_exports.pop):
    _pop(address, None)


@CFUNCTYPE(None, c_void_p)
def _capsule_destructor(capsule, _pop=_exports.pop, _valid=_raw_is_valid, _get=_raw_get_pointer):
    # A capsule nobody consumed still owns its tensor.
    for name in (_LEGACY, _VERSIONED):
        if _valid(capsule, name):
            _pop(_get(capsule, name), None)
            return


_DESTRUCTOR = ctypes.cast(_capsule_destructor, c_void_p)
# Consumers may call the deleter, and the last capsule die, while the interpreter shuts down,
# after this module's globals are gone: the two callbacks' code must outlive them.
_keep_forever = _api("Py_IncRef", None, py_object)
_keep_forever(_export_deleter)
_keep_forever(_capsule_destructor)


def export(array, data, device, bits, shape, strides, versioned, code=KDL_FLOAT):
    """A new capsule over `data` (element strides), keeping `array` alive while it is used;
    code and bits: the DLPack dtype (KDL_INT for k-NN's int64 indices)."""
    ndim = len(shape)
    dims = (c_int64 * max(ndim, 1))(*shape)
    steps = (c_int64 * max(ndim, 1))(*strides)
    managed = DLManagedTensorVersioned() if versioned else DLManagedTensor()
    t = managed.dl_tensor
    t.data = data
    t.device.device_type, t.device.device_id = device
    t.ndim = ndim
    t.dtype.code, t.dtype.bits, t.dtype.lanes = code, bits, 1
    t.shape = ctypes.cast(dims, POINTER(c_int64))
    t.strides = ctypes.cast(steps, POINTER(c_int64))
    t.byte_offset = 0
    managed.deleter = _export_deleter
    if versioned:
        managed.version.major, managed.version.minor = VERSION
        managed.flags = 0
    address = ctypes.addressof(managed)
    _exports[address] = (managed, dims, steps, array)
    try:
        return _capsule_new(address, _VERSIONED if versioned else _LEGACY, _DESTRUCTOR)
    except BaseException:
        del _exports[address]
        raise


def dtype_name(code, bits, lanes):
    """A DLPack dtype as NumPy would name it ("float32", "int64", "bfloat16")."""
    name = "%s%d" % (_CODE_NAMES.get(code, "code%d_" % code), bits)
    if code == 6 and bits == 8:
        name = "bool"
    return name if lanes == 1 else "%sx%d" % (name, lanes)


def device_name(device_type, device_id):
    name = _DEVICE_NAMES.get(device_type, "device type %d" % device_type)
    return name if device_type == KDL_CPU else "%s:%d" % (name, device_id)


def _no_copy(self, *memo):
    # A copy would run the producer's deleter twice.
    raise TypeError("a %s owns a DLPack tensor and cannot be copied or pickled" % type(self).__name__)


class Tensor:
    """A producer's tensor read out of its capsule, not yet taken (the capsule still owns it)."""

    __copy__ = __deepcopy__ = __reduce__ = _no_copy

    __slots__ = ("capsule", "address", "versioned", "data", "device", "code", "bits", "lanes",
                 "shape", "strides", "read_only")

    def __init__(self, capsule):
        if _capsule_is_valid(capsule, _VERSIONED):
            self.versioned = True
            self.address = _capsule_get_pointer(capsule, _VERSIONED)
            managed = DLManagedTensorVersioned.from_address(self.address)
            if managed.version.major != 1:
                raise BufferError("the DLPack capsule has version %d.%d; gpukern takes 1.x"
                                  % (managed.version.major, managed.version.minor))
            self.read_only = bool(managed.flags & FLAG_READ_ONLY)
        elif _capsule_is_valid(capsule, _LEGACY):
            self.versioned = False
            self.address = _capsule_get_pointer(capsule, _LEGACY)
            managed = DLManagedTensor.from_address(self.address)
            self.read_only = False
        else:
            raise BufferError("__dlpack__ returned %r, not an unused DLPack capsule" % (capsule,))
        self.capsule = capsule
        t = managed.dl_tensor
        self.data = (t.data or 0) + t.byte_offset
        self.device = (t.device.device_type, t.device.device_id)
        dt = t.dtype
        self.code, self.bits, self.lanes = dt.code, dt.bits, dt.lanes
        ndim = t.ndim
        if ndim < 0:
            raise BufferError("the DLPack tensor has ndim %d" % ndim)
        self.shape = tuple(t.shape[:ndim]) if ndim else ()
        if any(n < 0 for n in self.shape):
            raise BufferError("the DLPack tensor has shape %s: a dimension is negative" % (self.shape,))
        self.strides = tuple(t.strides[:ndim]) if ndim and t.strides else None

    def take(self):
        """Takes the tensor from its capsule: the returned owner calls its deleter when it dies."""
        if _capsule_set_name(self.capsule, _USED_VERSIONED if self.versioned else _USED_LEGACY):
            raise BufferError("cannot mark the DLPack capsule used")
        self.capsule = None
        return _Owner(self.address, self.versioned)


class _Owner:
    """Holds a taken DLPack tensor; its deleter runs when the last Array over it dies."""

    __slots__ = ("_address", "_deleter")
    __copy__ = __deepcopy__ = __reduce__ = _no_copy

    def __init__(self, address, versioned):
        kind = DLManagedTensorVersioned if versioned else DLManagedTensor
        self._address = address
        self._deleter = kind.from_address(address).deleter

    def __del__(self):
        deleter = self._deleter
        if deleter:
            self._deleter = None
            deleter(self._address)
