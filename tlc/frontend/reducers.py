"""T.alloc_reducer and T.finalize_reducer: reductions that T.Parallel loops
accumulate per thread.

A reducer R of shape S is two fragments. Its partials P, of shape
[threads, *S] and marked `tile.reducer`, hold one row per thread (thread t
row t, a register per element, in the layout given here). Between
T.fill/T.clear and T.finalize_reducer, an update in T.Parallel (`R[i] += v`,
`R[i] = T.max(R[i], v)`) is a memref.atomic_rmw of P at [0, i]: dimension 0
of partials names the running thread's own row, whichever thread the loop's
layout gives the iteration (tile-infer-layout leaves the update out of the
loop's layout; the lowering combines it into that thread's register; the
interpreter, which runs a loop's iterations at once, combines them as
atomics). The fill fills every row of P; the finalize is a tile.reduce of P
along dimension 0 into R, which leaves every thread holding all of R, so R
is then read anywhere: in T.Parallel at any index, and outside it.

The updates are checked where they are written: only the form the reducer's
op names, only inside T.Parallel and between the fill and the finalize;
reading, copying or writing R otherwise in that span is an error, as is a
fill that is never finalized.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass

from .. import ir
from ..errors import CompilationError
from ..dialects import arith, tile
from ..language import memory
from . import dtypes
from .intrinsic_args import batch_of_one, bind_args, parse_dtype, static_shape
from .scans import copy_whole
from .values import BufferRef, index_value

_OPS = ("sum", "max", "min")
_DTYPES = ("float16", "bfloat16", "float32", "int8", "int16", "int32")
_FORMS = {"sum": "R[i] += v", "max": "R[i] = T.max(R[i], v)", "min": "R[i] = T.min(R[i], v)"}


@dataclass(eq=False)
class Reducer:
    """What a reducer's BufferRef carries beside the result fragment."""

    partials: BufferRef
    op: str
    state: str = "new"  # "new" (never filled), "open" (filled), "final" (finalized)
    filled_at: object = None  # the fill's AST node while open
    regions: tuple = ()  # the run-time regions around the fill


def call_alloc_reducer(gen, node) -> BufferRef:
    """`R = T.alloc_reducer(shape, dtype, op="sum", replication=None)`."""
    gen.require_kernel(node, "T.alloc_reducer")
    if gen.parallel_depth:
        raise gen.error(node, "T.alloc_reducer cannot be inside T.Parallel")
    a = bind_args(gen, node, memory.alloc_reducer)
    shape = static_shape(gen, a["shape"], "a reducer")
    dt = parse_dtype(gen, a["dtype"])
    if str(dt) not in _DTYPES:
        raise gen.error(a["dtype"], f"a reducer's dtype is one of {', '.join(_DTYPES)}, got {dt}")
    op = gen.eval_static(a["op"])
    if op not in _OPS:
        raise gen.error(a["op"], f"a reducer's op is \"sum\", \"max\" or \"min\", got {op!r}")
    replication = gen.eval_static(a["replication"])
    if replication == "none":
        raise gen.error(a["replication"], (
            "replication=\"none\" (each element kept by one thread, the loops laid out by "
            "it) is not supported: use \"all\" (the default), where every thread keeps "
            "partial results of the whole reducer"))
    if replication not in (None, "all"):
        raise gen.error(a["replication"], f"replication is \"all\" or None, got {replication!r}")
    threads = math.prod(gen.thread_dims)
    if threads < 32 or threads & (threads - 1):
        raise gen.error(node, (
            f"T.alloc_reducer needs a block of 32, 64, 128, ... threads (its finalize "
            f"combines the threads' partial results in halves), got {threads}"))

    name = gen.assigned_name(node) or "reducer"
    storage = dtypes.storage_type(dt)
    space = ir.Attribute.parse("#tile.space<fragment>")
    numel = math.prod(shape)
    with ir.Location.name(name, childLoc=ir.Location.current):
        result = tile.alloc_fragment(ir.MemRefType.get(list(shape), storage, memory_space=space))
    with ir.Location.name(f"{name}_partials", childLoc=ir.Location.current):
        partials = tile.alloc_fragment(
            ir.MemRefType.get([threads, *shape], storage, memory_space=space))
    alloc = partials.owner
    alloc.attributes["layout"] = ir.Attribute.parse(
        f"#tile.layout<threads = {threads}, regs = {numel}, map = {_partials_map(shape)}>")
    alloc.attributes["tile.reducer"] = ir.UnitAttr.get()
    part = BufferRef(f"{name}_partials", partials, [threads, *shape], str(dt), "fragment")
    buf = BufferRef("", result, list(shape), str(dt), "fragment", reducer=Reducer(part, op))
    gen.reducers.append(buf)
    return buf


def check_finalized(gen) -> None:
    """At the end of a kernel: a reduction still open is an error at its fill."""
    for buf in gen.reducers:
        if buf.reducer.state == "open":
            raise gen.error(buf.reducer.filled_at, (
                f"the reducer '{buf.name}' is filled here but never finalized: "
                f"T.finalize_reducer({buf.name}) makes its result"))
    gen.reducers = []


def _partials_map(shape) -> str:
    """(thread, register) -> (thread, the register's row-major index in `shape`)."""
    results, stride = [], math.prod(shape)
    for k, d in enumerate(shape):
        stride //= d
        e = f"d1 floordiv {stride}" if stride > 1 else "d1"
        if k:
            e = f"({e}) mod {d}"
        results.append(e)
    return f"(d0, d1) -> (d0, {', '.join(results)})"


def fill(gen, node, buf: BufferRef, value) -> None:
    """T.fill(R, init) / T.clear(R): every thread's partials start at `init`."""
    red = buf.reducer
    if gen.parallel_depth:
        raise gen.error(node, f"T.fill of the reducer '{buf.name}' cannot be inside T.Parallel")
    if red.state == "open":
        raise gen.error(node, (
            f"the reducer '{buf.name}' is already being reduced (filled at line "
            f"{red.filled_at.lineno}): T.finalize_reducer({buf.name}) before filling it again"))
    if red.op == "sum" and not (isinstance(value, (int, float)) and not isinstance(value, bool)
                                and value == 0):
        raise gen.error(node, (
            f"a sum reducer starts at 0 (each thread's partial sum starts there and "
            f"T.finalize_reducer adds them): T.clear({buf.name}) or T.fill({buf.name}, 0), got "
            f"{gen.describe(value)}"))
    tile.fill(red.partials.value, gen.to_value(value, buf.dtype, node))
    red.state, red.filled_at, red.regions = "open", node, tuple(gen.regions)


def call_finalize_reducer(gen, node) -> None:
    """`T.finalize_reducer(R)`: R = the combination of the threads' partials."""
    gen.require_kernel(node, "T.finalize_reducer")
    a = bind_args(gen, node, memory.finalize_reducer,
                  {"annotations": "TileLang's lowering annotations"})
    batch_of_one(gen, a, "T.finalize_reducer")
    buf = gen.eval(a["reducer"])
    if not isinstance(buf, BufferRef) or buf.reducer is None:
        raise gen.error(a["reducer"], f"T.finalize_reducer takes a T.alloc_reducer buffer, got "
                                      f"{gen.describe(buf)}")
    red = buf.reducer
    if gen.parallel_depth:
        raise gen.error(node, "T.finalize_reducer cannot be inside T.Parallel")
    if red.state != "open":
        raise gen.error(node, (
            f"the reducer '{buf.name}' is not being reduced: T.fill({buf.name}, ...) or "
            f"T.clear({buf.name}) starts a reduction, T.finalize_reducer ends it"))
    if tuple(gen.regions) != red.regions:
        raise gen.error(node, (
            f"T.finalize_reducer({buf.name}) must be in the block of statements of its fill "
            f"(line {red.filled_at.lineno}), not inside or outside another loop or `if`"))
    i64 = ir.IntegerType.get_signless(64)
    kind = ir.Attribute.parse(f"#tile.reduce_kind<{red.op}>")
    op = tile.ReduceOp(red.partials.value, buf.value, kind, ir.IntegerAttr.get(i64, 0))
    op.attributes["clear"] = ir.UnitAttr.get()
    red.state, red.filled_at = "final", None
    dst = gen.eval(a["dst"]) if "dst" in a.given else None
    if dst is not None:  # TileLang's newer form: the result lands in dst
        if not isinstance(dst, BufferRef) or dst.place not in ("fragment", "shared", "local") \
                or list(dst.shape) != list(buf.shape):
            raise gen.error(a["dst"], f"T.finalize_reducer's dst is a fragment, shared or local "
                                      f"buffer of the reducer's shape {tuple(buf.shape)}, got "
                                      f"{gen.describe(dst)}")
        copy_whole(buf, dst)


def check_use(gen, node, buf: BufferRef) -> None:
    """Errors for a reducer used as a buffer (T.copy, T.gemm, ...) mid-reduction."""
    red = buf.reducer
    if red is not None and red.state == "open":
        raise gen.error(node, (
            f"the reducer '{buf.name}' holds partial results until "
            f"T.finalize_reducer({buf.name}) (filled at line {red.filled_at.lineno}); use it "
            "after the finalize"))


def check_read(gen, node, buf: BufferRef) -> None:
    """An element read of reducer `buf`: only after the finalize."""
    check_use(gen, node, buf)
    if buf.reducer.state == "new":
        raise gen.error(node, (
            f"the reducer '{buf.name}' holds no result yet: T.fill or T.clear it, update it "
            f"in T.Parallel ({_FORMS[buf.reducer.op]}) and T.finalize_reducer it first"))


def update(gen, node) -> bool:
    """A statement assigning a reducer's element (`R[i] += v`, `R[i] = T.max(R[i], v)`,
    ...): checks its form and emits the update; False if it assigns no reducer."""
    target = node.target if isinstance(node, ast.AugAssign) else node.targets[0]
    if not isinstance(target, ast.Subscript) or not isinstance(target.value, ast.Name):
        return False
    try:
        buf = gen.lookup(target.value.id, target.value)
    except CompilationError:  # an undefined name: the ordinary path reports it
        return False
    if not isinstance(buf, BufferRef) or buf.reducer is None:
        return False
    red = buf.reducer
    if isinstance(node, ast.Assign) and len(node.targets) != 1:
        raise gen.error(node, f"assign the reducer '{buf.name}' on its own")
    form = _FORMS[red.op].replace("R", buf.name)
    value_node = _contribution(gen, node, target, red.op, form, buf.name)
    if red.state != "open":
        raise gen.error(target, (
            f"the reducer '{buf.name}' is updated only between T.fill/T.clear({buf.name}) "
            f"and T.finalize_reducer({buf.name})"))
    if not gen.parallel_depth:
        raise gen.error(target, (
            f"the reducer '{buf.name}' is updated inside T.Parallel (each iteration adds "
            "its contribution in the thread that runs it)"))
    if tuple(gen.regions[:len(red.regions)]) != red.regions:
        raise gen.error(target, (
            f"this update of '{buf.name}' is outside the block of its fill (line "
            f"{red.filled_at.lineno})"))
    _, indices = gen.subscript(target)
    value = gen.to_value(gen.eval(value_node), buf.dtype, value_node)
    kinds = arith.AtomicRMWKind
    if dtypes.is_float(buf.dtype):
        kind = {"sum": kinds.addf, "max": kinds.maximumf, "min": kinds.minimumf}[red.op]
    else:
        kind = {"sum": kinds.addi, "max": kinds.maxs, "min": kinds.mins}[red.op]
    from ..dialects import memref

    with gen.loc(target):
        memref.atomic_rmw(kind, value, red.partials.value,
                          [index_value(0)] + [index_value(i) for i in indices])
    return True


def _contribution(gen, node, target, op: str, form: str, name: str):
    """The AST of the value an update contributes (v of R[i] += v), after
    checking the update has the form of the reducer's op."""
    same = ast.unparse(target)
    wrong = gen.error(node, f"'{name}' is a {op} reducer: update it as {form}")
    if isinstance(node, ast.AugAssign):
        if op != "sum" or not isinstance(node.op, ast.Add):
            raise wrong
        return node.value
    value = node.value
    if op == "sum":
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
            for mine, other in ((value.left, value.right), (value.right, value.left)):
                if ast.unparse(mine) == same:
                    return other
        raise wrong
    if isinstance(value, ast.Call) and len(value.args) == 2 and not value.keywords and \
            gen.eval_static(value.func) is gen.T(op):
        for mine, other in ((value.args[0], value.args[1]), (value.args[1], value.args[0])):
            if ast.unparse(mine) == same:
                return other
    raise wrong
