"""Values the frontend computes with while it builds tile IR.

Python ints, floats and bools stay Python values (folded at compile time).
Index arithmetic on run-time values is kept as an `Affine` sum so that slice
extents like `(bx + 1) * 64 - bx * 64` fold to constants and offsets reach
the compiler as `muli`/`addi` of constants (whose divisibility it reads).
Other run-time values are `Scalar`s: an MLIR value and its dtype name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import ir
from ..dialects import arith
from . import dtypes


@dataclass
class Scalar:
    """A run-time scalar: an MLIR value and its dtype ("float32", "index", ...)."""

    value: ir.Value
    dtype: str


@dataclass
class Affine:
    """sum(coeff * leaf) + const over index-typed run-time leaves."""

    terms: dict = field(default_factory=dict)  # ir.Value -> int coefficient
    const: int = 0

    @staticmethod
    def leaf(value: ir.Value) -> Affine:
        return Affine({value: 1}, 0)

    def constant(self) -> int | None:
        return self.const if not self.terms else None

    def __add__(self, other: Affine | int) -> Affine:
        other = as_affine(other)
        terms = dict(self.terms)
        for v, c in other.terms.items():
            terms[v] = terms.get(v, 0) + c
            if terms[v] == 0:
                del terms[v]
        return Affine(terms, self.const + other.const)

    def scale(self, k: int) -> Affine:
        if k == 0:
            return Affine({}, 0)
        return Affine({v: c * k for v, c in self.terms.items()}, self.const * k)

    def __neg__(self) -> Affine:
        return self.scale(-1)

    def __sub__(self, other: Affine | int) -> Affine:
        return self + (-as_affine(other))

    def materialize(self) -> ir.Value:
        """The index value, built at the current insertion point and location."""
        index = ir.IndexType.get()
        result = None
        for v, c in self.terms.items():
            term = v if c == 1 else arith.muli(v, arith.constant(index, c))
            result = term if result is None else arith.addi(result, term)
        if result is None:
            return arith.constant(index, self.const)
        if self.const:
            result = arith.addi(result, arith.constant(index, self.const))
        return result


def as_affine(x) -> Affine:
    if isinstance(x, Affine):
        return x
    if isinstance(x, bool) or not isinstance(x, int):
        raise TypeError(f"not an index: {x!r}")
    return Affine({}, x)


def simplify(x):
    """An Affine with no run-time terms becomes its Python int."""
    if isinstance(x, Affine) and not x.terms:
        return x.const
    return x


@dataclass(eq=False)
class BufferRef:
    """A buffer in the program: a memref value, its shape and dtype, its place.

    Compared and hashed by identity, so buffers can key a dict
    (`T.annotate_layout({A_shared: ...})`)."""

    name: str
    value: ir.Value
    shape: list  # ints (static) or Affine (dynamic sizes of global tensors)
    dtype: str
    place: str  # "global" | "shared" | "fragment" | "local"
    reducer: object = None  # T.alloc_reducer's state (tlc.frontend.reducers.Reducer)
    # A barrier list a pipelined loop of T.ws bodies gave one copy per stage
    # (tlc.frontend.ws_pipeline.StagedBarriers), inside that loop.
    stage: object = None

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def mlir_type(self) -> ir.MemRefType:
        return ir.MemRefType(self.value.type)

    def static_shape(self) -> list[int] | None:
        return None if any(not isinstance(d, int) for d in self.shape) else list(self.shape)


def index_value(x) -> ir.Value:
    """An index-typed MLIR value of a Python int, Affine or index/int Scalar."""
    if isinstance(x, bool):
        raise TypeError("a bool is not an index")
    if isinstance(x, int):
        return arith.constant(ir.IndexType.get(), x)
    if isinstance(x, Affine):
        return x.materialize()
    if isinstance(x, Scalar):
        if x.dtype == "index":
            return x.value
        if dtypes.is_int(x.dtype):  # an unsigned value keeps its value (zero-extended)
            cast = arith.index_castui if dtypes.is_unsigned(x.dtype) else arith.index_cast
            return cast(ir.IndexType.get(), x.value)
    raise TypeError(f"not an index: {x!r}")


@dataclass(eq=False)
class VarRef:
    """A T.alloc_var scalar: a per-thread local buffer of one element that the
    program reads and assigns by name (`x`, `x = v`, `x += v`)."""

    buffer: BufferRef  # place "local", shape [1]

    @property
    def name(self) -> str:
        return self.buffer.name

    @property
    def dtype(self) -> str:
        return self.buffer.dtype


class NoFlow:
    """The mark a name bound inside a run-time region leaves after it."""

    def __init__(self, kind: str, line: int, loop_var: bool = False, var: bool = False):
        self.kind, self.line, self.loop_var, self.var = kind, line, loop_var, var

    def message(self, name: str) -> str:
        where = "`if`" if self.kind == "if" else "loop"
        if self.loop_var:
            return (f"'{name}' is the variable of the run-time loop at line {self.line}; "
                    "it is not defined after the loop")
        if self.var:
            return (f"'{name}' is a T.alloc_var declared inside a run-time {where} (line "
                    f"{self.line}); it is not defined after it: declare it before the {where}")
        if self.kind == "if":
            return (f"'{name}' was assigned inside a run-time `if` (line {self.line}); values "
                    "do not flow out of run-time branches: choose the value with "
                    "`a if cond else b` (T.if_then_else) or store into a T.alloc_var "
                    "declared before it (or a T.alloc_local buffer)")
        return (f"'{name}' was assigned inside a run-time loop (line {self.line}); values do "
                "not flow out of run-time loops: store into a T.alloc_var declared before the "
                "loop (or a T.alloc_local buffer) instead")
