"""Compile-time values of the tile language: dtypes, tensors, symbolic sizes."""

from __future__ import annotations

import builtins
import os
import sys

from ..dtypes import BY_NAME
from ..errors import CompilationError, Diagnostic, SourceLocation

_TLC_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class AnnotationError(CompilationError, ValueError):
    """A mistake in a T.Tensor / T.dynamic annotation, at the user's line
    (a ValueError too, as these were before they had a location)."""


def _annotation_error(message: str) -> AnnotationError:
    """The error at the innermost frame outside tlc: where the user wrote the
    annotation (Python evaluates it when it runs the `def`)."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
            _TLC_ROOT + os.sep):
        frame = frame.f_back
    if frame is None:
        return AnnotationError(message)
    line, col = frame.f_lineno, 1
    try:
        positions = list(frame.f_code.co_positions())[frame.f_lasti // 2]
        if positions[0] == line and positions[2] is not None:
            col = positions[2] + 1
    except (AttributeError, IndexError):
        pass
    return AnnotationError([Diagnostic(message, SourceLocation(frame.f_code.co_filename,
                                                               line, col))])


# dtype names as users write them -> canonical names (from tlc.dtypes).
_ALIASES = {spelling: info.name for spelling, info in BY_NAME.items()}


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

    def as_torch(self):
        """The torch dtype of this element type (TileLang's `dtype.as_torch()`; imports
        torch)."""
        from ..dtypes import lookup
        from ..runtime.dtypes import torch_dtype

        return torch_dtype(lookup(self).runtime)

    def __call__(self, value):
        """`T.float16(x)` inside a prim_func is a cast; the frontend handles it."""
        raise RuntimeError(f"T.{self}(...) can only be used inside a @T.prim_func")

    def __repr__(self) -> str:
        return f"T.{self}"


_DType = dtype


class DataType(dtype):
    """TVM's DataType as TileLang programs use it on the host (`tilelang.DataType`):
    a dtype with its `bits` (and `lanes`, always 1: tlc has no vector dtypes).

    Example: `DataType("float16").bits == 16`
    """

    @property
    def lanes(self) -> int:
        return 1


float16 = dtype("float16")
bfloat16 = dtype("bfloat16")
float = dtype("float32")  # noqa: A001
float32 = dtype("float32")
# TileLang's tf32: float32 values, which gemms read as tf32 (tensor cores take float32 operands
# as tf32 on every target); elsewhere plain float32 arithmetic.
tfloat32 = float32
float64 = dtype("float64")
float8_e4m3 = dtype("float8_e4m3")
float8_e5m2 = dtype("float8_e5m2")
float8_e4m3fn = float8_e4m3  # TileLang's (and torch's) name of the same type
int8 = dtype("int8")
int16 = dtype("int16")
int32 = dtype("int32")
int64 = dtype("int64")
uint8 = dtype("uint8")
uint16 = dtype("uint16")
uint32 = dtype("uint32")
uint64 = dtype("uint64")
# TileLang's pointer type: a device address, held as a 64-bit integer (a
# `T.Tensor([G], T.ptr)` pointer table, a `p: T.ptr` parameter) that
# T.make_tensor turns into a tensor.
ptr = int64
bool = dtype("bool")  # noqa: A001


class SymbolicDim:
    """A size known only at run time: `M = T.dynamic("m")`; kernels compiled
    with it serve every value (no recompilation per size)."""

    def __init__(self, name: str, dtype: str = "int32"):
        if not isinstance(name, str) or not name.isidentifier():
            raise _annotation_error(f"a symbolic size needs an identifier name, got {name!r}")
        if str(dtype) not in ("int32", "int64"):
            raise _annotation_error(f"a symbolic size is an int32 or int64, got {dtype!r}")
        self.name = name
        self.dtype = _DType(dtype)

    def __repr__(self) -> str:
        return f"T.dynamic({self.name!r})"

    # `seq_len * heads` in a tensor's shape (TileLang's eager declarations):
    # a SymbolicExpr, checked against the tensor's size at each call.
    def _arith(op: str, reflected: bool = False):  # noqa: N805 (a class-body helper)
        def method(self, other):
            return SymbolicExpr.combine(op, other, self) if reflected else \
                SymbolicExpr.combine(op, self, other)
        return method

    __add__, __radd__ = _arith("+"), _arith("+", True)
    __sub__, __rsub__ = _arith("-"), _arith("-", True)
    __mul__, __rmul__ = _arith("*"), _arith("*", True)
    __floordiv__ = _arith("//")
    del _arith

    @property
    def source(self) -> str:
        return self.name

    @property
    def symbols(self) -> frozenset:
        return frozenset((self.name,))


class SymbolicExpr(SymbolicDim):
    """A size computed from symbolic sizes and ints with + - * and // (by an
    int): `T.Tensor([seq_len * heads, dim], ...)`. Its `source` is the
    expression in the runtime's grid-expression language, fully
    parenthesized; the launcher checks the tensor's size against it (and
    takes a symbol no plain dimension gives from it, `seq_len` = size //
    heads)."""

    def __init__(self, op: str, lhs, rhs):  # noqa: D107 (not SymbolicDim's)
        self.op, self.lhs, self.rhs = op, lhs, rhs
        self.name = self.source
        kinds = [x.dtype for x in (lhs, rhs) if isinstance(x, SymbolicDim)]
        self.dtype = _DType("int64" if "int64" in kinds else "int32")

    @staticmethod
    def combine(op: str, lhs, rhs):
        for x in (lhs, rhs):
            if isinstance(x, builtins.bool) or not isinstance(x, (int, SymbolicDim)):
                return NotImplemented
        if op == "//" and not (isinstance(rhs, int) and rhs > 0):
            raise _annotation_error(f"a symbolic size is divided by a positive int only, got "
                                    f"{rhs!r}")
        return SymbolicExpr(op, lhs, rhs)

    @property
    def source(self) -> str:
        side = lambda x: x.source if isinstance(x, SymbolicDim) else str(x)  # noqa: E731
        return f"({side(self.lhs)} {self.op} {side(self.rhs)})"

    @property
    def symbols(self) -> frozenset:
        return frozenset().union(*(x.symbols for x in (self.lhs, self.rhs)
                                   if isinstance(x, SymbolicDim)))

    def __repr__(self) -> str:
        return self.source


def dynamic(name: str, dtype: str = "int32"):
    """A symbolic (run-time) size named `name`; several at once from names separated by
    commas or spaces (`batch, seq = T.dynamic("batch, seq")`, as TileLang writes them), as
    a tuple."""
    names = [n for n in str(name).replace(",", " ").split() if n] if isinstance(name, str) \
        else [name]
    if len(names) > 1:
        return tuple(SymbolicDim(n, dtype) for n in names)
    return SymbolicDim(name, dtype)


symbolic = dynamic


MAX_TENSOR_BYTES = 2**63 - 1


def _as_tuple(value, what: str) -> tuple:
    """A size (or stride) or a sequence of them, as a tuple; `what` says what
    was expected when it is neither."""
    if isinstance(value, (int, SymbolicDim)):
        return (value,)
    try:
        return tuple(value)
    except TypeError:
        raise _annotation_error(f"{what}, got {value!r}") from None


class Tensor:
    """The annotation of a global tensor parameter: `A: T.Tensor((M, K), "float16")`."""

    def __init__(self, shape, dtype: str = "float32"):  # noqa: F811
        shape = _as_tuple(shape, "a tensor's shape is a tuple of sizes")
        for d in shape:
            if isinstance(d, builtins.bool) or not isinstance(d, (int, SymbolicDim)) or (
                    isinstance(d, int) and d <= 0):
                raise _annotation_error(
                    f"tensor sizes must be positive ints or T.dynamic(...), got {d!r}")
        try:
            self.dtype = _DType(dtype)
        except (ValueError, TypeError) as e:
            raise _annotation_error(str(e)) from None
        elements = 1
        for d in shape:
            elements *= d if isinstance(d, int) else 1
        if elements * max(self.dtype.bits // 8, 1) > MAX_TENSOR_BYTES:
            raise _annotation_error(
                f"tensor shape {tuple(shape)!r} of {self.dtype} is larger than 2**63 - 1 "
                "bytes: sizes and offsets are 64-bit")
        self.shape = shape

    def __class_getitem__(cls, item):
        """`T.Tensor[(M, N), "float16"]` is accepted too."""
        shape, dt = item if isinstance(item, tuple) and len(item) == 2 else (item, "float32")
        return cls(shape, dt)

    def __repr__(self) -> str:
        return f"T.Tensor({self.shape!r}, {self.dtype!r})"


Buffer = Tensor


class StridedTensor(Tensor):
    """A global tensor parameter with the strides (in elements, outermost
    first) it is stored with: `A: T.StridedTensor((M, N), (dM, dN), "float32")`
    or `T.StridedTensor[[M, N], [dM, dN], T.float32]` (TileLang's spelling).
    A stride is an int or a T.dynamic symbol bound from the argument's strides
    at each call (a symbol may be a size elsewhere too). Accesses along a
    dimension whose stride is not the int 1 go element by element, and such a
    tensor is never copied by TMA."""

    def __init__(self, shape, strides, dtype: str = "float32"):
        super().__init__(shape, dtype)
        strides = _as_tuple(strides, "a tensor's strides are a tuple")
        if len(strides) != len(self.shape):
            raise _annotation_error(f"T.StridedTensor: {len(strides)} strides for the "
                                    f"{len(self.shape)} dims of shape {self.shape!r}")
        for s in strides:
            if isinstance(s, builtins.bool) or not (
                    (isinstance(s, int) and s >= 0) or type(s) is SymbolicDim):
                raise _annotation_error(
                    f"strides must be ints >= 0 or T.dynamic(...) symbols, got {s!r}")
        self.strides = strides

    def __class_getitem__(cls, item):
        if not isinstance(item, tuple) or len(item) != 3:
            raise _annotation_error("write T.StridedTensor[shape, strides, dtype]")
        return cls(*item)

    def __repr__(self) -> str:
        return f"T.StridedTensor({self.shape!r}, {self.strides!r}, {self.dtype!r})"


class OnChipBuffer:
    """The annotation of a T.macro parameter that takes a buffer of the block:
    `acc: T.FragmentBuffer((64, 64), "float32")`, `T.SharedBuffer`,
    `T.LocalBuffer` (TileLang's names). A call passing a buffer of another
    place, dtype or shape is an error at the call. Kernel parameters are
    global tensors (T.Tensor), never these."""

    def __init__(self, place: str, shape, dtype: str = "float32", **unsupported):
        self.place = place
        if unsupported:
            name = next(iter(unsupported))
            raise _annotation_error(f"{self.kind}'s '{name}' (a TVM buffer field) is not "
                                    "supported by tlc: give the shape and dtype")
        spec = Tensor(shape, dtype)
        self.shape, self.dtype = spec.shape, spec.dtype

    @property
    def kind(self) -> str:
        return _ON_CHIP_KINDS[self.place]

    def __repr__(self) -> str:
        return f"T.{self.kind}({self.shape!r}, {self.dtype!r})"


_ON_CHIP_KINDS = {"shared": "SharedBuffer", "fragment": "FragmentBuffer", "local": "LocalBuffer"}


class _OnChipKind:
    """T.SharedBuffer / T.FragmentBuffer / T.LocalBuffer: called or subscripted."""

    def __init__(self, place: str):
        self.place = place
        self.__name__ = _ON_CHIP_KINDS[place]

    def __call__(self, shape, dtype: str = "float32", **kwargs) -> OnChipBuffer:
        return OnChipBuffer(self.place, shape, dtype, **kwargs)

    def __getitem__(self, item) -> OnChipBuffer:
        shape, dt = item if isinstance(item, tuple) and len(item) == 2 else (item, "float32")
        return OnChipBuffer(self.place, shape, dt)

    def __repr__(self) -> str:
        return f"T.{self.__name__}"


SharedBuffer = _OnChipKind("shared")
FragmentBuffer = _OnChipKind("fragment")
LocalBuffer = _OnChipKind("local")
