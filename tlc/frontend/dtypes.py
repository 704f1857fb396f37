"""dtype names <-> MLIR types."""

from __future__ import annotations

from .. import ir

_FLOATS = {
    "float16": ir.F16Type.get, "bfloat16": ir.BF16Type.get, "float32": ir.F32Type.get,
    "float64": ir.F64Type.get, "float8_e4m3": ir.Float8E4M3FNType.get,
    "float8_e5m2": ir.Float8E5M2Type.get,
}
_INTS = {"int8": 8, "uint8": 8, "int16": 16, "int32": 32, "int64": 64, "bool": 1}


def mlir_type(dtype: str) -> ir.Type:
    """The MLIR type of a dtype name (signless integers; "index" for indices)."""
    if dtype == "index":
        return ir.IndexType.get()
    if dtype in _FLOATS:
        return _FLOATS[dtype]()
    return ir.IntegerType.get_signless(_INTS[dtype])


def storage_type(dtype: str) -> ir.Type:
    """The element type of a buffer of `dtype`: bools are kept as bytes (0 or 1)
    in memory, as torch and numpy keep them; values in registers are i1."""
    return ir.IntegerType.get_signless(8) if dtype == "bool" else mlir_type(dtype)


def is_float(dtype: str) -> bool:
    return dtype in _FLOATS


def is_int(dtype: str) -> bool:
    return dtype in _INTS or dtype == "index"


def is_unsigned(dtype: str) -> bool:
    return dtype in ("uint8", "bool")


def bits(dtype: str) -> int:
    if dtype == "index":
        return 64
    if dtype in _INTS:
        return _INTS[dtype]
    return {"float16": 16, "bfloat16": 16, "float32": 32, "float64": 64}.get(dtype, 8)


def int_range(dtype: str) -> tuple[int, int]:
    """The integer constants a dtype holds: an index is 64-bit signed; an
    N-bit integer takes its signed or unsigned values (either reading of N bits,
    so masks such as 0xFFFFFFFF fit an int32)."""
    if dtype == "index":
        return -(1 << 63), (1 << 63) - 1
    n = bits(dtype)
    return -(1 << (n - 1)), (1 << n) - 1
