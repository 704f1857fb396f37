"""`break` and `continue` in the loops that run in order at run time: `while`
loops and run-time `T.serial` / `range` loops.

A loop whose body (outside the loops nested in it) has a `break` gets a
per-thread flag (a local int32 the loop clears before it starts): `break`
sets it, a `while` loop's condition also requires it clear, and a `for`
loop (an scf.for, which runs all its iterations) skips the whole body of
every iteration once it is set. A `continue` sets a second flag, cleared at
the start of every iteration. Statements after one that may set a flag run
under an `if` that both are clear, so the rest of the iteration is skipped.
Elsewhere (T.Parallel, T.Pipelined, loops unrolled at compile time) a
`break` or `continue` is an error at its line.
"""

from __future__ import annotations

import ast
import contextlib
from dataclasses import dataclass

from .. import ir
from ..dialects import arith, memref, scf
from . import variables


@dataclass
class LoopExits:
    """The flags of one loop: None where its body has no such statement."""

    brk: ir.Value | None = None
    cont: ir.Value | None = None


def _is_loop_break(s) -> bool:
    """`T.loop_break()` (TileLang's break) as a statement."""
    return isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and \
        isinstance(s.value.func, ast.Attribute) and s.value.func.attr == "loop_break"


def _exits(stmts, kind) -> bool:
    """Whether `stmts` hold a statement of `kind` (ast.Break / ast.Continue;
    T.loop_break() is a break) that belongs to their loop (not to a loop
    nested in them)."""
    for s in stmts:
        if isinstance(s, kind) or kind is ast.Break and _is_loop_break(s):
            return True
        if isinstance(s, ast.If) and (_exits(s.body, kind) or _exits(s.orelse, kind)):
            return True
        if isinstance(s, ast.With) and _exits(s.body, kind):
            return True
    return False


def _flag(gen) -> ir.Value:
    """A local int32 for a loop's flag, where a T.alloc_var's would be."""
    return variables.local_scalar(gen, ir.IntegerType.get_signless(32))


def _set(flag: ir.Value, value: int) -> None:
    index = ir.IndexType.get()
    memref.store(arith.constant(ir.IntegerType.get_signless(32), value), flag,
                 [arith.constant(index, 0)])


def _clear(flag: ir.Value) -> ir.Value:
    """An i1: the flag is 0."""
    i32 = ir.IntegerType.get_signless(32)
    loaded = memref.load(flag, [arith.constant(ir.IndexType.get(), 0)])
    return arith.cmpi(arith.CmpIPredicate.eq, loaded, arith.constant(i32, 0))


def loop_exits(gen, node) -> LoopExits:
    """The flags of the run-time loop `node` (cleared here, before it)."""
    exits = LoopExits()
    if _exits(node.body, ast.Break):
        exits.brk = _flag(gen)
        _set(exits.brk, 0)
    if _exits(node.body, ast.Continue):
        exits.cont = _flag(gen)
    return exits


def not_broken(exits: LoopExits) -> ir.Value | None:
    """An i1 that the loop's break flag is clear (None: it has none)."""
    return _clear(exits.brk) if exits.brk is not None else None


def start_iteration(exits: LoopExits) -> None:
    if exits.cont is not None:
        _set(exits.cont, 0)


@contextlib.contextmanager
def loop_body(gen, exits: LoopExits):
    """Builds a loop's body with its flags in force (`gen.loops` is the stack
    of the loops being built, sequential or not)."""
    gen.loops.append(exits)
    try:
        yield
    finally:
        gen.loops.pop()


@contextlib.contextmanager
def other_loop(gen, node):
    """A loop `break` / `continue` cannot leave (T.Parallel, T.Pipelined, a
    loop unrolled at compile time): its body's are errors."""
    with loop_body(gen, LoopExits()):
        yield


def may_exit(gen, stmt) -> bool:
    """Whether `stmt` may set a flag of the innermost loop being built."""
    if not gen.loops:
        return False
    exits = gen.loops[-1]
    return (exits.brk is not None and _exits([stmt], ast.Break)) or \
        (exits.cont is not None and _exits([stmt], ast.Continue))


def rest_guard(gen):
    """An scf.if (to build the rest of a body in) that the innermost loop's
    flags are clear."""
    exits = gen.loops[-1]
    conds = [_clear(f) for f in (exits.brk, exits.cont) if f is not None]
    cond = conds[0] if len(conds) == 1 else arith.andi(conds[0], conds[1])
    return scf.IfOp(cond)


def stmt_exit(gen, node, kind: str) -> None:
    """`break` / `continue`: sets the innermost loop's flag."""
    exits = gen.loops[-1] if gen.loops else None
    flag = None if exits is None else (exits.brk if kind == "break" else exits.cont)
    if flag is None:
        raise gen.error(node, f"`{kind}` leaves only a `while` loop or a run-time T.serial / "
                              "range loop (not T.Parallel, T.Pipelined or a loop unrolled "
                              "at compile time)")
    _set(flag, 1)
