"""`T.Layout(shape, forward_fn)` (TileLang's): where a global tensor keeps its
elements. `forward_fn(*index)` gives each element's coordinates in a physical
row-major array of the same elements, so a program can place them for its
accesses; FlashAttention's backward pass keeps dQ so that a warp's atomic adds
of a gemm fragment touch contiguous addresses:

    T.Layout(dQ.shape, lambda b, h, l, d: [b, h, l // 8, d // 8, d % 2,
                                            4 * (l % 8) + (d % 8) // 2])

Given to T.annotate_layout for a global tensor, every access of the kernel to
it (element reads and writes, atomics, T.copy regions) goes to the element's
physical place. The function is traced once on symbols: its coordinates are
sums, products by constants, floor divisions and remainders by positive
constants of the indices; the physical shape is each coordinate's range
(interval arithmetic), which must hold as many elements as the tensor (a
one-to-one remap: tlc checks the count). Layouts of shared buffers and
fragments are `make_swizzled_layout` and `T.Fragment`.
"""

from __future__ import annotations

import ast
import math

from .errors import LayoutError


class _Sym:
    """A traced index expression: ("index", k) | ("const", c) | (op, a, b)."""

    __slots__ = ("node",)

    def __init__(self, node):
        self.node = node

    @staticmethod
    def of(x) -> _Sym:
        if isinstance(x, _Sym):
            return x
        if isinstance(x, bool) or not isinstance(x, int):
            raise LayoutError(f"T.Layout's function computes with integer indices and "
                              f"constants, got {x!r}")
        return _Sym(("const", x))

    def _bin(self, op, other, swap=False):
        a, b = _Sym.of(self), _Sym.of(other)
        if swap:
            a, b = b, a
        if op in ("*", "//", "%") and b.node[0] != "const" and (op != "*" or a.node[0] != "const"):
            raise LayoutError(f"T.Layout's function may only {'multiply' if op == '*' else 'divide'}"
                              " by constants")
        if op in ("//", "%") and b.node[1] <= 0:
            raise LayoutError(f"T.Layout's function divides by {b.node[1]}: divisors must be "
                              "positive")
        return _Sym((op, a, b))

    def __add__(self, o): return self._bin("+", o)
    def __radd__(self, o): return self._bin("+", o, True)
    def __sub__(self, o): return self._bin("-", o)
    def __rsub__(self, o): return self._bin("-", o, True)
    def __mul__(self, o): return self._bin("*", o)
    def __rmul__(self, o): return self._bin("*", o, True)
    def __floordiv__(self, o): return self._bin("//", o)
    def __mod__(self, o): return self._bin("%", o)

    def __bool__(self):
        raise LayoutError("T.Layout's function cannot branch on an index (no `if` on it): "
                          "write the coordinates as expressions")


def _range(node, shape) -> tuple[int, int]:
    """The interval of values a traced node takes over the index domain."""
    kind = node[0]
    if kind == "index":
        return 0, shape[node[1]] - 1
    if kind == "const":
        return node[1], node[1]
    (alo, ahi), (blo, bhi) = _range(node[1].node, shape), _range(node[2].node, shape)
    if kind == "+":
        return alo + blo, ahi + bhi
    if kind == "-":
        return alo - bhi, ahi - blo
    if kind == "*":
        products = (alo * blo, alo * bhi, ahi * blo, ahi * bhi)
        return min(products), max(products)
    if alo < 0:
        # Python floors, the kernel's integer division truncates: they agree
        # on non-negative operands only
        raise LayoutError(f"T.Layout's function takes {'//' if kind == '//' else '%'} of a "
                          f"value that can be negative ({alo}): keep divided values "
                          "non-negative")
    if kind == "//":
        return alo // blo, ahi // blo
    # %: an operand below the divisor stays as it is
    return (alo, ahi) if ahi < blo else (0, blo - 1)


def _evaluate(node, values, binop):
    """The node's value with indices `values`, combined by `binop(op, a, b)`."""
    kind = node[0]
    if kind == "index":
        return values[node[1]]
    if kind == "const":
        return node[1]
    return binop(kind, _evaluate(node[1].node, values, binop),
                 _evaluate(node[2].node, values, binop))


_INT_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
            "//": lambda a, b: a // b, "%": lambda a, b: a % b}
_AST_OPS = {"+": ast.Add, "-": ast.Sub, "*": ast.Mult, "//": ast.FloorDiv, "%": ast.Mod}


class Layout:
    """A global tensor's element placement: `Layout(shape, forward_fn)`."""

    def __init__(self, shape, forward_fn):
        try:
            self.shape = tuple(int(d) for d in shape)
        except (TypeError, ValueError):
            raise LayoutError(f"T.Layout needs a static shape of ints, got {list(shape)}") \
                from None
        if not self.shape or any(d <= 0 for d in self.shape):
            raise LayoutError(f"T.Layout needs positive sizes, got {list(self.shape)}")
        if not callable(forward_fn):
            raise LayoutError("T.Layout(shape, forward_fn): forward_fn must be a function of "
                              "the indices")
        out = forward_fn(*[_Sym(("index", k)) for k in range(len(self.shape))])
        if isinstance(out, (_Sym, int)):
            out = [out]
        self.coords = [_Sym.of(c).node for c in out]
        ranges = [_range(c, self.shape) for c in self.coords]
        for k, (lo, _) in enumerate(ranges):
            if lo < 0:
                raise LayoutError(f"T.Layout's coordinate {k} can be negative ({lo})")
        self.output_shape = tuple(hi + 1 for _, hi in ranges)
        elements, places = math.prod(self.shape), math.prod(self.output_shape)
        if elements != places:
            raise LayoutError(f"T.Layout maps the {elements} elements of shape "
                              f"{list(self.shape)} into {places} places (physical shape "
                              f"{list(self.output_shape)}): a tensor's layout must place each "
                              "element once")

    def get_input_shape(self) -> list[int]:
        return list(self.shape)

    def get_output_shape(self) -> list[int]:
        return list(self.output_shape)

    def forward(self, *index: int) -> list[int]:
        """The physical coordinates of the element at `index` (ints)."""
        return [_evaluate(c, index, lambda op, a, b: _INT_OPS[op](a, b)) for c in self.coords]

    def offset(self, *index: int) -> int:
        """The element's row-major position in the physical array."""
        flat = 0
        for c, d in zip(self.forward(*index), self.output_shape):
            flat = flat * d + c
        return flat

    def placed(self, index, binop):
        """The logical index (of the tensor's own shape) whose row-major
        position is the element's physical one: the same memory, addressed
        through the tensor as declared. `binop(op_ast_class, a, b)` computes
        on the frontend's index values."""
        coords = [_evaluate(c, list(index), lambda op, a, b: binop(_AST_OPS[op], a, b))
                  for c in self.coords]
        flat = 0
        for c, d in zip(coords, self.output_shape):
            flat = binop(_AST_OPS["+"], binop(_AST_OPS["*"], flat, d), c)
        out, stride = [], math.prod(self.shape)
        for k, d in enumerate(self.shape):
            stride //= d
            q = binop(_AST_OPS["//"], flat, stride) if stride > 1 else flat
            out.append(q if k == 0 else binop(_AST_OPS["%"], q, d))
        return out

    def __repr__(self) -> str:
        return f"T.Layout({list(self.shape)} -> {list(self.output_shape)})"
