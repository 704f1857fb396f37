"""The element types a kernel parameter may have, and how each one is spelled
by the array protocols the runtime accepts."""

import ctypes
from dataclasses import dataclass

from ..dtypes import TABLE


@dataclass(frozen=True)
class DType:
    name: str
    itemsize: int
    kind: str  # "f" float, "i" signed int, "u" unsigned int, "b" bool
    # How a scalar parameter of this type is passed. float16 and bfloat16 go
    # as their 16-bit pattern since ctypes has no half types.
    ctype: type


# How a scalar parameter of each (kind, storage bits) is passed: floats of 16
# and 8 bits go as their bit pattern (ctypes has no such types).
_CTYPES = {("f", 16): ctypes.c_uint16, ("f", 32): ctypes.c_float, ("f", 64): ctypes.c_double,
           ("f", 8): ctypes.c_uint8, ("i", 8): ctypes.c_int8, ("i", 16): ctypes.c_int16,
           ("i", 32): ctypes.c_int32, ("i", 64): ctypes.c_int64, ("u", 8): ctypes.c_uint8,
           ("u", 16): ctypes.c_uint16, ("u", 32): ctypes.c_uint32,
           ("u", 64): ctypes.c_uint64, ("b", 8): ctypes.c_bool}

# By the artifact's names, all from tlc.dtypes (the one table).
DTYPES = {
    d.runtime: DType(d.runtime, d.itemsize, d.kind, _CTYPES[(d.kind, d.storage_bits)])
    for d in TABLE
}

# __cuda_array_interface__ typestr without its byte-order character. The
# protocol has no standard spelling of bfloat16 or fp8.
TYPESTR = {d.typestr: d.runtime for d in TABLE if d.typestr}

# DLPack (type code, bits).
DLPACK = {d.dlpack: d.runtime for d in TABLE if d.dlpack}


def torch_dtype(name: str):
    """The torch dtype of a dtype name (imports torch: call only with torch at hand)."""
    import torch

    return getattr(torch, name)
