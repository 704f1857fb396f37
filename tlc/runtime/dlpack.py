"""Reading a DLPack capsule with ctypes (legacy, unversioned DLManagedTensor).

The capsule is only read, never consumed: it keeps its "dltensor" name, so
its own destructor calls the producer's deleter when the capsule is
collected. The caller keeps the capsule (and the producer) alive until the
launch has been issued.
"""

import ctypes

KDL_CPU = 1
KDL_CUDA = 2


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),  # elements; NULL = row-major
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


_CAPSULE_NAME = b"dltensor"

# Private prototypes: setting argtypes on ctypes.pythonapi's shared function
# objects would change them for every other user in the process.
_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi))
_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))


def read_capsule(capsule) -> DLTensor | None:
    """The DLTensor inside an unconsumed "dltensor" capsule, else None. The
    result points into the capsule's memory: keep the capsule alive."""
    if not _is_valid(capsule, _CAPSULE_NAME):
        return None
    address = _get_pointer(capsule, _CAPSULE_NAME)
    return DLManagedTensor.from_address(address).dl_tensor


def export(obj):
    """obj.__dlpack__ with stream=None (we order nothing against the
    producer's stream), falling back for producers that take no stream."""
    try:
        return obj.__dlpack__(stream=None)
    except TypeError:
        return obj.__dlpack__()
