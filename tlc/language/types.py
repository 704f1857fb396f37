"""Compile-time values of the tile language: dtypes, tensors, symbolic sizes."""

from __future__ import annotations

import builtins

# dtype names as users write them -> canonical names (the runtime's names).
_ALIASES = {
    "float16": "float16", "half": "float16", "fp16": "float16",
    "bfloat16": "bfloat16", "bf16": "bfloat16",
    "float": "float32", "float32": "float32", "fp32": "float32",
    "float64": "float64", "double": "float64",
    "int8": "int8", "int16": "int16", "int32": "int32", "int": "int32", "int64": "int64",
    "uint8": "uint8", "bool": "bool",
    "float8_e4m3": "float8_e4m3", "float8_e4m3fn": "float8_e4m3",
    "float8_e5m2": "float8_e5m2",
}


class dtype(str):
    """An element type: a str subclass so "float16" and T.float16 are alike."""

    def __new__(cls, name: str):
        canonical = _ALIASES.get(str(name))
        if canonical is None:
            known = ", ".join(sorted(set(_ALIASES)))
            raise ValueError(f"unknown dtype '{name}' (known: {known})")
        return super().__new__(cls, canonical)

    @property
    def is_float(self) -> builtins.bool:
        return self.startswith(("float", "bfloat"))

    @property
    def bits(self) -> int:
        if self == "bool":
            return 1
        return int("".join(c for c in self.split("_")[0] if c.isdigit()))

    def __call__(self, value):
        """`T.float16(x)` inside a prim_func is a cast; the frontend handles it."""
        raise RuntimeError(f"T.{self}(...) can only be used inside a @T.prim_func")

    def __repr__(self) -> str:
        return f"T.{self}"


_DType = dtype

float16 = dtype("float16")
bfloat16 = dtype("bfloat16")
float = dtype("float32")  # noqa: A001
float32 = dtype("float32")
float64 = dtype("float64")
float8_e4m3 = dtype("float8_e4m3")
float8_e5m2 = dtype("float8_e5m2")
int8 = dtype("int8")
int16 = dtype("int16")
int32 = dtype("int32")
int64 = dtype("int64")
uint8 = dtype("uint8")
bool = dtype("bool")  # noqa: A001


class SymbolicDim:
    """A size known only at run time: `M = T.dynamic("m")`; kernels compiled
    with it serve every value (no recompilation per size)."""

    def __init__(self, name: str, dtype: str = "int32"):
        if not name.isidentifier():
            raise ValueError(f"a symbolic size needs an identifier name, got '{name}'")
        # Sizes are 64-bit indices in tlc, which hold every int32 or int64 value.
        if str(dtype) not in ("int32", "int64"):
            raise ValueError(f"a symbolic size is an int32 or int64, got dtype {dtype!r}")
        self.name = name
        self.dtype = _DType(dtype)

    def __repr__(self) -> str:
        return f"T.dynamic({self.name!r})"


def dynamic(name: str, dtype: str = "int32") -> SymbolicDim:
    """A symbolic (run-time) size named `name`."""
    return SymbolicDim(name, dtype)


symbolic = dynamic


class Tensor:
    """The annotation of a global tensor parameter: `A: T.Tensor((M, K), "float16")`."""

    def __init__(self, shape, dtype: str = "float32"):  # noqa: F811
        if isinstance(shape, (int, SymbolicDim)):
            shape = (shape,)
        shape = tuple(shape)
        for d in shape:
            if not isinstance(d, (int, SymbolicDim)) or (isinstance(d, int) and d <= 0):
                raise ValueError(
                    f"tensor sizes must be positive ints or T.dynamic(...), got {d!r}"
                )
        self.shape = shape
        self.dtype = _DType(dtype)

    def __class_getitem__(cls, item):
        """`T.Tensor[(M, N), "float16"]` is accepted too."""
        shape, dt = item if isinstance(item, tuple) and len(item) == 2 else (item, "float32")
        return cls(shape, dt)

    def __repr__(self) -> str:
        return f"T.Tensor({self.shape!r}, {self.dtype!r})"


Buffer = Tensor
