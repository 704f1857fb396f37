"""The tile language, TileLang-style: `import tlc.language as T`.

Everything here is either a compile-time value (dtypes, tensor annotations,
symbolic sizes, warp policies) or an intrinsic that only has meaning inside a
`@T.prim_func`: the frontend reads the function's source and builds tile IR
for each intrinsic call it meets. Called from ordinary Python, an intrinsic
raises an error saying so.
"""

from __future__ import annotations

import enum

from ..host import cdiv

from .types import (
    Tensor,
    Buffer,
    SymbolicDim,
    dtype,
    dynamic,
    symbolic,
    bfloat16,
    bool,  # noqa: A004
    float,  # noqa: A004
    float8_e4m3,
    float8_e5m2,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
)


class GemmWarpPolicy(enum.Enum):
    """How T.gemm spreads its output tile over the block's warps."""

    Square = "square"
    FullRow = "full_row"
    FullCol = "full_col"


class Intrinsic:
    """A `T.` function the frontend turns into tile IR. Called from ordinary
    Python it is an error, except the integer helpers (T.ceildiv, T.floordiv),
    which compute on plain ints there as in TileLang."""

    def __init__(self, name: str, host=None):
        self.name = name
        self._host = host

    def __call__(self, *args, **kwargs):
        if self._host is not None:
            return self._host(*args, **kwargs)
        raise RuntimeError(
            f"T.{self.name} can only be used inside a @T.prim_func (tlc reads the "
            "function's source and compiles it; it is not run as Python)"
        )

    def __repr__(self) -> str:
        return f"T.{self.name}"


_INTRINSICS = [
    "Kernel", "alloc_shared", "alloc_fragment", "alloc_local", "copy", "clear", "fill",
    "gemm", "reduce_max", "reduce_sum", "reduce_min", "reduce_abssum", "reduce_absmax",
    "Parallel", "Pipelined", "serial", "unroll", "use_swizzle", "annotate_layout",
    "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "abs", "max", "min", "if_then_else",
    "infinity", "cast", "ceildiv", "floordiv",
]
def _floordiv(a: int, b: int) -> int:
    """a // b for integers (T.floordiv outside a kernel)."""
    cdiv(a, b)  # the same argument checks
    return a // b


_HOST = {"ceildiv": cdiv, "floordiv": _floordiv}
for _name in _INTRINSICS:
    globals()[_name] = Intrinsic(_name, _HOST.get(_name))
del _name

from ..frontend.prim_func import prim_func  # noqa: E402


def const(names: str):
    """`M, N = T.const("M, N")`: sizes of an eager @tlc.jit kernel, taken from
    its tensor arguments' shapes (see tlc.eager); only valid there."""
    raise RuntimeError("T.const declares sizes in the body of an eager-style @tlc.jit kernel "
                       "(one whose body has the `with T.Kernel(...)`); it is not run as Python")


def empty(shape, dtype: str = "float32"):
    """`C = T.empty((M, N), "float16")`: an output of an eager @tlc.jit kernel,
    allocated at each call and returned (see tlc.eager); only valid there."""
    raise RuntimeError("T.empty declares an output in the body of an eager-style @tlc.jit "
                       "kernel (one whose body has the `with T.Kernel(...)`); it is not run as "
                       "Python")

__all__ = [
    "Buffer", "GemmWarpPolicy", "Intrinsic", "SymbolicDim", "Tensor", "const", "dtype",
    "dynamic", "empty",
    "prim_func", "symbolic", "bfloat16", "bool", "float", "float8_e4m3", "float8_e5m2",
    "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
    "uint16", "uint32",
    *_INTRINSICS,
]
