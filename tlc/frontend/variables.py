"""T.alloc_var: per-thread scalar variables, read and assigned by name.

A variable is a one-element per-thread buffer (a `tile.alloc_local` of shape
(1,)); convert-tile-to-gpu turns it into a `memref.alloca` at the kernel's
entry, which LLVM promotes to a register. Reading the variable's name loads
element 0, and `x = v`, `x += v` store there, converting `v` to the
variable's dtype as every store does. Being storage, not a Python binding,
it carries values across run-time loop iterations and out of run-time `if`
branches, like a T.alloc_local buffer accessed as `acc[0]` (which `x[0]`
also is).

The declaration stores the variable's first value (`init`, else zero), so a
read before any assignment is defined, on the GPU and in the interpreter. A
variable declared in a T.Parallel body is one per iteration: its storage is
allocated before the loop and each iteration stores the first value anew.
"""

from __future__ import annotations

import ast
import contextlib

from .. import ir
from ..dialects import tile
from ..language import memory
from ..language.types import dtype as DType
from . import dtypes
from .intrinsic_args import bind_args, parse_dtype
from .values import BufferRef, Scalar, VarRef

_SCOPE = "local.var"


def call_alloc_var(gen, node) -> VarRef:
    """`x = T.alloc_var(dtype[, init][, scope], scope=, init=)`."""
    gen.require_kernel(node, "T.alloc_var")
    a = bind_args(gen, node, memory.alloc_var)
    init, init_node, scope, scope_node = _init_and_scope(gen, node, a)
    if scope != _SCOPE:
        raise gen.error(scope_node, f"T.alloc_var takes scope {_SCOPE!r}, got {scope!r} (a "
                                    "variable is a per-thread register; other places have "
                                    "their own T.alloc_*)")
    dt = parse_dtype(gen, a["dtype"])
    var = VarRef(BufferRef("", local_scalar(gen, dtypes.storage_type(dt)), [1], str(dt),
                           "local"))
    assign(gen, var, 0 if init is None else init, init_node)
    return var


def local_scalar(gen, element: ir.Type) -> ir.Value:
    """A per-thread one-element local buffer (T.alloc_var's storage, a loop's
    break flag). In a T.Parallel body it is allocated before the outermost
    T.Parallel (tile ops allocate no buffers inside one); each iteration
    starts its own value with its first store."""
    space = ir.Attribute.parse("#tile.space<local>")
    t = ir.MemRefType.get([1], element, memory_space=space)
    where = ir.InsertionPoint(gen.outer_parallel) if gen.parallel_depth else None
    with where or contextlib.nullcontext():
        return tile.alloc_local(t)


def _init_and_scope(gen, node, a):
    """(init value or None, its node, scope, its node) of an alloc_var call,
    TileLang's positional forms included: `(dtype, init)`, `(dtype, scope)`
    (a string) and `(dtype, init, scope)`."""
    extra = a["args"]
    if len(extra) > 2:
        raise gen.error(extra[2], f"T.alloc_var takes at most 3 positional arguments (dtype, "
                                  f"init, scope), got {len(extra) + 1}")
    init_node, scope_node = a["init"], a["scope"]
    if len(extra) == 2:
        init_node, scope_node = _once(gen, a, "init", extra[0]), _once(gen, a, "scope", extra[1])
        return gen.eval(init_node), init_node, gen.eval_static(scope_node), scope_node
    if len(extra) == 1:
        value = gen.eval(extra[0])
        if isinstance(value, str):  # TileLang: a lone positional string is the scope
            scope_node = _once(gen, a, "scope", extra[0])
            return gen.eval(init_node), init_node, value, scope_node
        init_node = _once(gen, a, "init", extra[0])
        return value, init_node, gen.eval_static(scope_node), scope_node
    return gen.eval(init_node), init_node, gen.eval_static(scope_node), scope_node


def _once(gen, a, name: str, node):
    if name in a.given:
        raise gen.error(node, f"T.alloc_var got '{name}' twice (by position and by keyword)")
    return node


def assign(gen, var: VarRef, value, node) -> None:
    """`var = value`: a store of `value`, converted to the variable's dtype."""
    if isinstance(value, (BufferRef, VarRef, tuple, list, slice)):
        what = ("a T.alloc_var declaration" if isinstance(value, VarRef)
                else gen.describe(value))
        raise gen.error(node, f"'{var.name}' is a T.alloc_var {var.dtype} scalar: assign it a "
                              f"value, not {what}")
    gen.store_element(var.buffer, [0], value, node)


def read(gen, var: VarRef) -> Scalar:
    """The variable's current value: read once per statement and block, so
    that both bounds of `X[off + i * 8:off + (i + 1) * 8]` share the read of
    `off` and the slice's extent is known (every store to a local buffer
    forgets the reads: CodeGenerator.store_element)."""
    block = ir.InsertionPoint.current.block
    reads = gen.__dict__.setdefault("var_reads", {})
    hit = reads.get(id(var))
    if hit is not None and hit[0] == block:
        return hit[1]
    value = gen.load_element(var.buffer, [0])
    reads[id(var)] = (block, value)
    return value


def attribute(gen, var: VarRef, node: ast.Attribute):
    """`x.dtype` of a variable (its only attribute)."""
    if node.attr == "dtype":
        return DType(var.dtype)
    raise gen.error(node, f"'{var.name}' is a T.alloc_var scalar: it has .dtype, not "
                          f".{node.attr}")


def named(gen, node) -> VarRef | None:
    """The variable `node` names, when it is the name of a T.alloc_var."""
    if not isinstance(node, ast.Name):
        return None
    for scope in reversed(gen.scopes):
        if node.id in scope:
            value = scope[node.id]
            return value if isinstance(value, VarRef) else None
    return None
