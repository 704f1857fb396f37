"""Element types as numpy sees them, and the roundings numpy lacks.

float16, float32 and float64 are numpy's own. bfloat16 and the float8 types
have no numpy dtype: their values live in float32 arrays and every value of
such a type is rounded to it when it is produced (an arith op's result, a
conversion, a store), so the array only ever holds values the type can hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


def round_bf16(x):
    """float32 values rounded to bfloat16 (round to nearest, ties to even), as float32."""
    a = np.asarray(x, dtype=np.float32)
    u = a.view(np.uint32)
    r = (u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    r = np.where(np.isnan(a), u | np.uint32(0x00400000), r)  # NaN stays (quiet) NaN
    out = r.astype(np.uint32).view(np.float32)
    return out if a.ndim else out[()]


def round_tf32(x):
    """float32 values rounded to TensorFloat-32 (10 mantissa bits), as float32."""
    a = np.asarray(x, dtype=np.float32)
    u = a.view(np.uint32)
    r = (u + np.uint32(0xFFF) + ((u >> np.uint32(13)) & np.uint32(1))) & np.uint32(0xFFFFE000)
    r = np.where(np.isfinite(a), r, u)
    out = r.astype(np.uint32).view(np.float32)
    return out if a.ndim else out[()]


def _round_small_float(mantissa_bits: int, min_exponent: int, max_finite: float):
    """A rounding to a narrow float format (to nearest, ties to even), saturating
    at its largest finite value as the GPU's `cvt.rn.satfinite` does."""

    def round_to(x):
        a = np.asarray(x, dtype=np.float64)
        _, e = np.frexp(a)
        quantum = np.ldexp(1.0, np.maximum(e - 1, min_exponent) - mantissa_bits)
        with np.errstate(invalid="ignore"):
            r = np.rint(a / quantum) * quantum
        r = np.where(np.isfinite(a), r, a)
        r = np.clip(r, -max_finite, max_finite)  # NaN stays NaN
        out = r.astype(np.float32)
        return out if a.ndim else out[()]

    return round_to


round_f8e4m3 = _round_small_float(3, -6, 448.0)
round_f8e5m2 = _round_small_float(2, -14, 57344.0)


@dataclass(frozen=True)
class ElementType:
    """An MLIR scalar type as the interpreter computes with it."""

    name: str  # the MLIR spelling: "f16", "bf16", "i32", "index", ...
    dtype: np.dtype  # the numpy dtype values and buffers of this type use
    kind: str  # "f" float, "i" integer (signless), "b" i1, "x" index
    bits: int
    round: Callable | None = None  # applied to every produced value (bf16, f8)

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def unsigned(self) -> np.dtype:
        """The unsigned integer dtype of the same width (for the *ui ops)."""
        return np.dtype(f"uint{max(self.bits, 8)}") if self.kind in "ix" else self.dtype

    @property
    def holds_bytes(self) -> bool:
        """Whether buffers of this type hold its own bytes (not bf16 / fp8,
        kept widened to float32), so a view can reinterpret them."""
        return self.dtype.itemsize * 8 == self.bits

    def describe(self) -> str:
        return _DESCRIPTIONS.get(self.name, self.name)

    def make(self, value):
        """`value` (a float/int or array of them) as a value of this type."""
        if self.kind == "x":
            return int(value) if np.ndim(value) == 0 else np.asarray(value, dtype=np.int64)
        if self.round is not None:
            return self.round(value)
        a = np.asarray(value).astype(self.dtype, copy=False)  # ints wrap, as in hardware
        return a if a.ndim else a[()]


_DESCRIPTIONS = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
                 "f8E4M3FN": "float8_e4m3", "f8E5M2": "float8_e5m2", "i1": "bool",
                 "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
                 "index": "index"}

_TYPES = {
    "f16": ElementType("f16", np.dtype(np.float16), "f", 16),
    "bf16": ElementType("bf16", np.dtype(np.float32), "f", 16, round_bf16),
    "f32": ElementType("f32", np.dtype(np.float32), "f", 32),
    "f64": ElementType("f64", np.dtype(np.float64), "f", 64),
    "f8E4M3FN": ElementType("f8E4M3FN", np.dtype(np.float32), "f", 8, round_f8e4m3),
    "f8E5M2": ElementType("f8E5M2", np.dtype(np.float32), "f", 8, round_f8e5m2),
    "i1": ElementType("i1", np.dtype(np.bool_), "b", 1),
    "i8": ElementType("i8", np.dtype(np.int8), "i", 8),
    "i16": ElementType("i16", np.dtype(np.int16), "i", 16),
    "i32": ElementType("i32", np.dtype(np.int32), "i", 32),
    "i64": ElementType("i64", np.dtype(np.int64), "i", 64),
    "index": ElementType("index", np.dtype(np.int64), "x", 64),
}


def element_type(mlir_type) -> ElementType | None:
    """The ElementType of an MLIR scalar type, None when the interpreter has none."""
    return _TYPES.get(str(mlir_type))


def convert(value, src: ElementType, dst: ElementType):
    """`value` of type `src` converted to `dst` the way tile.copy converts
    elements: floats extend/round, float -> int truncates toward zero
    (saturating, NaN -> 0), int -> float rounds, ints extend signed or wrap."""
    if src.name == dst.name:
        return value
    if dst.kind == "b":  # trunci keeps the low bit
        return np.not_equal(value, 0) if src.is_float else np.not_equal(np.bitwise_and(value, 1), 0)
    if src.kind == "b":  # extsi/sitofp of i1: true is -1
        value = -np.asarray(value).astype(np.int64)
    if src.is_float and not dst.is_float:
        return float_to_int(value, dst)
    if not src.is_float and dst.is_float:
        return dst.make(np.asarray(value).astype(np.float64))
    return dst.make(value)


def float_to_int(value, dst: ElementType, unsigned: bool = False):
    """Truncation toward zero, saturating at the type's range, NaN -> 0 (cvt.rzi.sat)."""
    target = dst.unsigned if unsigned else dst.dtype
    info = np.iinfo(target)
    with np.errstate(invalid="ignore"):
        a = np.nan_to_num(np.trunc(np.asarray(value, dtype=np.float64)), nan=0.0)
        a = np.clip(a, info.min, info.max).astype(target)
    return dst.make(a)
