"""The element types a kernel parameter may have, and how each one is spelled
by the array protocols the runtime accepts."""

import ctypes
from dataclasses import dataclass


@dataclass(frozen=True)
class DType:
    name: str
    itemsize: int
    kind: str  # "f" float, "i" signed int, "u" unsigned int, "b" bool
    # How a scalar parameter of this type is passed. float16 and bfloat16 go
    # as their 16-bit pattern since ctypes has no half types.
    ctype: type


DTYPES = {
    d.name: d
    for d in (
        DType("float16", 2, "f", ctypes.c_uint16),
        DType("bfloat16", 2, "f", ctypes.c_uint16),
        DType("float32", 4, "f", ctypes.c_float),
        DType("float64", 8, "f", ctypes.c_double),
        # fp8 scalars go as their 8-bit pattern.
        DType("float8_e4m3fn", 1, "f", ctypes.c_uint8),
        DType("float8_e5m2", 1, "f", ctypes.c_uint8),
        DType("int8", 1, "i", ctypes.c_int8),
        DType("int16", 2, "i", ctypes.c_int16),
        DType("int32", 4, "i", ctypes.c_int32),
        DType("int64", 8, "i", ctypes.c_int64),
        DType("uint8", 1, "u", ctypes.c_uint8),
        DType("bool", 1, "b", ctypes.c_bool),
    )
}

# __cuda_array_interface__ typestr without its byte-order character. The
# protocol has no standard spelling of bfloat16.
TYPESTR = {"f2": "float16", "f4": "float32", "f8": "float64", "i1": "int8",
           "i2": "int16", "i4": "int32", "i8": "int64", "u1": "uint8",
           "b1": "bool"}

# DLPack (type code, bits) with kDLInt=0, kDLUInt=1, kDLFloat=2,
# kDLBfloat=4, kDLBool=6.
DLPACK = {(2, 16): "float16", (4, 16): "bfloat16", (2, 32): "float32",
          (2, 64): "float64", (0, 8): "int8", (0, 16): "int16",
          (0, 32): "int32", (0, 64): "int64", (1, 8): "uint8",
          (6, 8): "bool"}


def torch_dtype(name: str):
    """The torch dtype of a dtype name (imports torch: call only with torch at hand)."""
    import torch

    return {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
            "float64": torch.float64, "int8": torch.int8, "int16": torch.int16,
            "int32": torch.int32, "int64": torch.int64, "uint8": torch.uint8,
            "bool": torch.bool, "float8_e4m3fn": torch.float8_e4m3fn,
            "float8_e5m2": torch.float8_e5m2}[name]
