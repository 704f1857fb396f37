"""Warp specialization written as branches on the thread index.

TileLang's hand-specialized kernels (its DeepSeek MLA decode, FlashMLA)
split the block with `tx = T.get_thread_binding()` and

    if tx < 128:                 # consumer warpgroup 0
        ...
    elif tx >= 128 and tx < 256: # consumer warpgroup 1
        ...
    else:                        # the producer
        ...

where each branch holds tile work (T.Parallel loops, copies, gemms,
T.set_max_nreg) laid over its own threads. When every branch of such a chain
is a whole number of warps (its bounds compile-time multiples of 32 on a 1-d
block) and some branch holds tile work, each branch is built as the body of
its threads (tile.ws: of whole warpgroups where its bounds are multiples of
128, as `with T.ws(...)`; else of warps, as TileLang's mHC kernel runs a
warp's tile work beside the others' with `if tx < 32:`), which is what it
means. Other branches on the thread index stay ordinary `if`s (code each
thread runs on its own values), where tile work is an error.
"""

from __future__ import annotations

import ast
import math

from ..errors import CompilationError
from .intrinsic_args import called_name, known_int
from .values import Affine

WARP = 32

# T.* calls that are work of the threads running them together.
_TILE_WORK = {"Parallel", "Pipelined", "copy", "gemm", "wgmma_gemm", "fill", "clear",
              "reduce_max", "reduce_min", "reduce_sum", "reduce_abssum", "reduce_absmax",
              "cumsum", "cummax", "finalize_reducer", "set_max_nreg", "inc_max_nreg",
              "dec_max_nreg", "wait_wgmma"}


def _has_tile_work(stmts) -> bool:
    return any(called_name(node) in _TILE_WORK for stmt in stmts for node in ast.walk(stmt))


def _is_thread_index(gen, node) -> bool:
    """Whether `node` is the thread index: a name bound to it (`tx`), or the
    call `T.get_thread_binding()` itself."""
    if isinstance(node, ast.Call):
        if called_name(node) != "get_thread_binding":
            return False
    elif not isinstance(node, ast.Name):
        return False
    try:
        value = gen.eval(node)
    except CompilationError:
        return False
    if not isinstance(value, Affine) or value.const != 0 or len(value.terms) != 1:
        return False
    (leaf, coeff), = value.terms.items()
    owner = getattr(leaf, "owner", None)
    return coeff == 1 and owner is not None and getattr(owner, "name", "") == "gpu.thread_id"


_FLIP = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE}


def _interval(gen, test, total: int):
    """The threads [lo, hi) for which `test` holds, when it bounds the thread
    index by compile-time integers (comparisons, chained or joined by `and`);
    else None."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        lo, hi = 0, total
        for value in test.values:
            part = _interval(gen, value, total)
            if part is None:
                return None
            lo, hi = max(lo, part[0]), min(hi, part[1])
        return lo, hi
    if not isinstance(test, ast.Compare):
        return None
    lo, hi = 0, total
    operands = [test.left, *test.comparators]
    for left, op, right in zip(operands, test.ops, operands[1:]):
        if type(op) not in _FLIP:
            return None
        if _is_thread_index(gen, left) and (bound := known_int(gen, right)) is not None:
            kind = type(op)
        elif _is_thread_index(gen, right) and (bound := known_int(gen, left)) is not None:
            kind = _FLIP[type(op)]
        else:
            return None
        if kind is ast.Lt:
            hi = min(hi, bound)
        elif kind is ast.LtE:
            hi = min(hi, bound + 1)
        elif kind is ast.Gt:
            lo = max(lo, bound + 1)
        else:
            lo = max(lo, bound)
    return lo, hi


def warp_branches(gen, node: ast.If):
    """[(warps, statements)] of the `if` / `elif` / `else` chain `node` when it
    specializes whole warps and holds tile work (see the module's
    description), else None. Branches no thread takes are left out."""
    from .warp_groups import in_ws_body

    dims = getattr(gen, "thread_dims", None)
    if not dims or math.prod(dims[1:]) != 1 or dims[0] % WARP or in_ws_body(gen):
        return None
    total = dims[0]
    branches, work = [], False
    avail, current = (0, total), node
    while True:
        interval = _interval(gen, current.test, total)
        if interval is None:
            return None
        lo, hi = max(interval[0], avail[0]), min(interval[1], avail[1])
        if lo >= hi:
            rest = avail  # no thread takes this branch
        else:
            if lo % WARP or hi % WARP:
                return None
            if lo == avail[0]:
                rest = (hi, avail[1])
            elif hi == avail[1]:
                rest = (avail[0], lo)
            else:
                return None  # the remaining threads would not be contiguous
            branches.append((list(range(lo // WARP, hi // WARP)), current.body))
        work |= _has_tile_work(current.body)
        orelse = current.orelse
        if len(orelse) == 1 and isinstance(orelse[0], ast.If):
            current, avail = orelse[0], rest
            continue
        if orelse:
            work |= _has_tile_work(orelse)
            if rest[0] < rest[1]:
                branches.append((list(range(rest[0] // WARP, rest[1] // WARP)), orelse))
        break
    return branches if work and branches else None
