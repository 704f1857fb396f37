"""Every element type tlc knows, in one table.

The language's names and aliases, the bits in registers and in memory, and how
the artifact, torch, numpy, DLPack, `__cuda_array_interface__` and MLIR spell
each one. The frontend, the runtime and the interpreter derive their views
from here. Pure Python: the runtime uses it without the compiler, and nothing
here imports numpy or torch.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DTypeInfo:
    name: str  # the language's canonical name (T.<name>)
    bits: int  # in registers
    kind: str  # "f" float, "i" signed int, "u" unsigned int, "b" bool
    runtime: str  # the artifact's name, and torch's (torch.<runtime>)
    mlir: str  # the MLIR element type in registers ("f16", "i32", "f8E4M3FN")
    numpy: str | None  # numpy's name; None where numpy has no such type
    typestr: str | None  # __cuda_array_interface__ typestr without the byte order
    dlpack: tuple[int, int] | None  # (type code, bits)
    aliases: tuple[str, ...] = ()

    @property
    def storage_bits(self) -> int:
        """Bits in memory: bools are whole bytes (0 or 1), as torch and numpy keep them."""
        return max(self.bits, 8)

    @property
    def itemsize(self) -> int:
        return self.storage_bits // 8

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_unsigned(self) -> bool:
        """Unsigned in conversions (bools are 0 or 1)."""
        return self.kind in "ub"


# DLPack type codes: kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4, kDLBool 6.
TABLE: tuple[DTypeInfo, ...] = (
    DTypeInfo("float16", 16, "f", "float16", "f16", "float16", "f2", (2, 16),
              ("half", "fp16")),
    DTypeInfo("bfloat16", 16, "f", "bfloat16", "bf16", None, None, (4, 16), ("bf16",)),
    DTypeInfo("float32", 32, "f", "float32", "f32", "float32", "f4", (2, 32),
              ("float", "fp32", "tfloat32")),
    DTypeInfo("float64", 64, "f", "float64", "f64", "float64", "f8", (2, 64), ("double",)),
    DTypeInfo("float8_e4m3", 8, "f", "float8_e4m3fn", "f8E4M3FN", None, None, None,
              ("float8_e4m3fn",)),
    DTypeInfo("float8_e5m2", 8, "f", "float8_e5m2", "f8E5M2", None, None, None),
    DTypeInfo("int8", 8, "i", "int8", "i8", "int8", "i1", (0, 8)),
    DTypeInfo("int16", 16, "i", "int16", "i16", "int16", "i2", (0, 16)),
    DTypeInfo("int32", 32, "i", "int32", "i32", "int32", "i4", (0, 32), ("int",)),
    DTypeInfo("int64", 64, "i", "int64", "i64", "int64", "i8", (0, 64)),
    DTypeInfo("uint8", 8, "u", "uint8", "i8", "uint8", "u1", (1, 8)),
    DTypeInfo("uint16", 16, "u", "uint16", "i16", "uint16", "u2", (1, 16)),
    DTypeInfo("uint32", 32, "u", "uint32", "i32", "uint32", "u4", (1, 32)),
    DTypeInfo("uint64", 64, "u", "uint64", "i64", "uint64", "u8", (1, 64)),
    DTypeInfo("bool", 1, "b", "bool", "i1", "bool", "b1", (6, 8)),
)

#: Every spelling the language accepts -> its entry.
BY_NAME: dict[str, DTypeInfo] = {
    spelling: d for d in TABLE for spelling in (d.name, *d.aliases)}

#: The artifact's (and torch's) names -> entries.
BY_RUNTIME: dict[str, DTypeInfo] = {d.runtime: d for d in TABLE}


def lookup(name: str) -> DTypeInfo:
    """The entry of a language spelling; ValueError naming the known ones."""
    info = BY_NAME.get(str(name))
    if info is None:
        raise ValueError(f"unknown dtype '{name}' (known: {', '.join(sorted(BY_NAME))})")
    return info
