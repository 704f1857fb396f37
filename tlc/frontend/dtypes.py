"""dtype names <-> MLIR types, from the one table in tlc.dtypes."""

from __future__ import annotations

from .. import ir
from ..dtypes import BY_NAME, DTypeInfo

def _info(dtype: str) -> DTypeInfo:
    return BY_NAME[dtype]


def mlir_type(dtype: str) -> ir.Type:
    """The MLIR type of a dtype name (signless integers; "index" for indices)."""
    if dtype == "index":
        return ir.IndexType.get()
    return ir.Type.parse(_info(dtype).mlir)


def storage_type(dtype: str) -> ir.Type:
    """The element type of a buffer of `dtype`: bools are kept as bytes (0 or 1)
    in memory, as torch and numpy keep them; values in registers are i1."""
    if dtype != "index" and _info(dtype).storage_bits != _info(dtype).bits:
        return ir.IntegerType.get_signless(_info(dtype).storage_bits)
    return mlir_type(dtype)


def is_float(dtype: str) -> bool:
    return dtype in BY_NAME and _info(dtype).is_float


def is_int(dtype: str) -> bool:
    return dtype == "index" or (dtype in BY_NAME and not _info(dtype).is_float)


def is_fp8(dtype: str) -> bool:
    return dtype in BY_NAME and _info(dtype).is_float and _info(dtype).bits == 8


def is_unsigned(dtype: str) -> bool:
    return dtype in BY_NAME and _info(dtype).is_unsigned


def needs_tag(dtype: str) -> bool:
    """Whether a kernel parameter of `dtype` names it (tile.dtype): the MLIR
    type alone (signless integers) does not tell uint8 from int8 or a bool byte."""
    return _info(dtype).is_unsigned


def bits(dtype: str) -> int:
    if dtype == "index":
        return 64
    return _info(dtype).bits


def itemsize(dtype: str) -> int:
    """Bytes an element of `dtype` takes in memory (a bool: one)."""
    return _info(dtype).itemsize


def int_range(dtype: str) -> tuple[int, int]:
    """The integer constants a dtype holds: an index is 64-bit signed; an
    N-bit integer takes its signed or unsigned values (either reading of N bits,
    so masks such as 0xFFFFFFFF fit an int32)."""
    if dtype == "index":
        return -(1 << 63), (1 << 63) - 1
    n = bits(dtype)
    return -(1 << (n - 1)), (1 << n) - 1
