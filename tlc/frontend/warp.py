"""Warp-level programming (tlc.language.warp): lane/warp/warpgroup indices,
warp shuffles and votes, and the program's own barriers, in the kernel's code
outside T.Parallel, where each statement runs in every thread.

Indices come from the linear thread index (gpu.thread_id x; with
threads=(x, y, z) the linear index, as TileLang's helpers use). Shuffles are
nvvm.shfl.sync of a 32-bit value over groups of `width` lanes (narrower
values widened and narrowed back), votes nvvm.vote.sync;
tlc.frontend.threads checks that no thread-dependent branch encloses one
(every lane of the warp must run it). T.activemask is PTX's activemask (an
inline asm), valid anywhere. T.sync_threads is a gpu.barrier, or a
named barrier (nvvm.barrier) of `arrive_count` threads.
"""

from __future__ import annotations

import math

from .. import ir
from ..dialects import arith
from ..language import warp
from . import dtypes
from .intrinsic_args import bind_args as _args
from .values import Affine, Scalar
from .warp_groups import in_ws_body

_MODES = {"shfl_xor": "bfly", "shfl_down": "down", "shfl_up": "up", "shfl_sync": "idx"}
# Named barriers 1 to 8 are the compiler's: a warpgroup set's barriers (T.ws
# bodies, warp-specialized consumers) take 1 + their first warpgroup.
_FIRST_ID = 9


def _kernel_code(gen, node, what: str) -> None:
    gen.require_kernel(node, what)
    if gen.parallel_depth:
        raise gen.error(node, f"{what} is not valid inside T.Parallel: the compiler decides "
                              "which thread runs each iteration; use it in the kernel's own "
                              "code, which every thread runs")


def _static_pow2(gen, node, what: str, name: str, default: int, limit: int) -> int:
    value = default if node is None else gen.eval_static(node)
    if value is None:
        value = default
    if isinstance(value, bool) or not isinstance(value, int) or value < 1 or \
            value & (value - 1) or value > limit:
        raise gen.error(node, f"{what}: {name} must be a power of two from 1 to {limit}, "
                              f"got {value!r}")
    return value


def _linear_thread(gen):
    from ..dialects import gpu

    gen.uses_thread_index = True
    value = gpu.thread_id(gpu.Dimension.x)
    gen.ranges[value] = (0, math.prod(gen.thread_dims) - 1)
    return value


def _index_of(gen, node, fn, what, divisor_of):
    _kernel_code(gen, node, what)
    a = _args(gen, node, fn)
    divisor, modulus = divisor_of(a)
    index = ir.IndexType.get()
    value = _linear_thread(gen)
    threads = math.prod(gen.thread_dims)
    if divisor > 1:
        value = arith.divui(value, arith.constant(index, divisor))
    top = (threads - 1) // divisor
    if modulus is not None:
        value = arith.remui(value, arith.constant(index, modulus))
        top = min(top, modulus - 1)
    gen.ranges[value] = (0, top)
    return Affine.leaf(value)


def call_get_lane_idx(gen, node):
    what = "T.get_lane_idx"
    return _index_of(gen, node, warp.get_lane_idx, what, lambda a: (
        1, _static_pow2(gen, a["warp_size"], what, "warp_size", 32, 32)))


def call_get_warp_idx(gen, node):
    what = "T.get_warp_idx"
    return _index_of(gen, node, warp.get_warp_idx, what, lambda a: (
        _static_pow2(gen, a["warp_size"], what, "warp_size", 32, 32), None))


def call_get_warp_idx_sync(gen, node):
    what = "T.get_warp_idx_sync"
    return _index_of(gen, node, warp.get_warp_idx_sync, what, lambda a: (
        _static_pow2(gen, a["warp_size"], what, "warp_size", 32, 32), None))


def call_get_warp_group_idx(gen, node):
    what = "T.get_warp_group_idx"

    def divisor(a):
        size = _static_pow2(gen, a["warp_size"], what, "warp_size", 32, 32)
        per = gen.eval_static(a["warps_per_group"])
        per = 4 if per is None else per
        if isinstance(per, bool) or not isinstance(per, int) or per < 1:
            raise gen.error(a["warps_per_group"], f"{what}: warps_per_group must be a "
                                                  f"positive integer, got {per!r}")
        return size * per, None

    return _index_of(gen, node, warp.get_warp_group_idx, what, divisor)


def _whole_warp(gen, a, what: str, verb: str) -> None:
    """A shuffle's or vote's `mask` must name every lane of the warp."""
    mask = gen.eval_static(a["mask"])
    if mask not in (None, warp.FULL_MASK, -1):
        raise gen.error(a["mask"], f"{what}: tlc {verb} across the whole warp (mask "
                                   f"0xFFFFFFFF); got {mask!r}")


def _shuffle(gen, node, name: str):
    what = f"T.{name}"
    _kernel_code(gen, node, what)
    a = _args(gen, node, getattr(warp, name))
    _whole_warp(gen, a, what, "shuffles")
    width = _static_pow2(gen, a["width"], what, "width", 32, 32)
    value = gen.eval(a["value"])
    if isinstance(value, Affine):
        value = Scalar(gen.index(value, a["value"], "a shuffled value"), "index")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value  # the same in every lane
    if not isinstance(value, Scalar):
        raise gen.error(a["value"], f"{what} shuffles a scalar, got {gen.describe(value)}")
    dt, wide = _shuffled_types(gen, value, a["value"], what)
    v = gen.to_value(value, wide, a["value"])
    other = a["srcLane"] if name == "shfl_sync" else a["delta"]
    lane = gen.to_value(gen.eval(other), "int32", other)
    out = Scalar(_shfl(v, lane, name, width), wide)
    return out if wide == dt else Scalar(gen.to_value(out, dt, a["value"]), dt)


def _shuffled_types(gen, value: Scalar, node, what: str) -> tuple[str, str]:
    """(the value's dtype, the 32-bit dtype it travels in)."""
    dt = value.dtype if value.dtype != "index" else "int32"
    if dt in ("float64", "int64", "uint64") or dt.startswith("float8") or dt == "bool":
        raise gen.error(node, f"{what} shuffles values of 32 bits or fewer "
                              f"(float32/16, bfloat16, int8-32, uint8-32), got {dt}")
    return dt, "float32" if dtypes.is_float(dt) else ("uint32" if dt.startswith("uint")
                                                     else "int32")


def _shfl(v, lane, name: str, width: int = 32):
    """nvvm.shfl.sync of the 32-bit value `v` from `lane` (an i32 value) in mode
    `name`, in groups of `width` lanes: PTX's clamp operand, as __shfl_*_sync
    builds it (gpu.shuffle's width instead leaves the lanes past it inactive)."""
    i32 = ir.IntegerType.get_signless(32)
    clamp = (32 - width) << 8 | (0 if name == "shfl_up" else 0x1F)
    op = ir.Operation.create(
        "nvvm.shfl.sync", results=[v.type],
        operands=[arith.constant(i32, -1), v, lane, arith.constant(i32, clamp)],
        attributes={"kind": ir.Attribute.parse(f"#nvvm<shfl_kind {_MODES[name]}>")})
    return op.results[0]


_WARP_COMBINE = {  # (float op, signed op, unsigned op)
    "sum": (arith.addf, arith.addi, arith.addi),
    "max": (arith.maxnumf, arith.maxsi, arith.maxui),
    "min": (arith.minnumf, arith.minsi, arith.minui),
    "bitand": (None, arith.andi, arith.andi),
    "bitor": (None, arith.ori, arith.ori),
}


def _warp_reduce(gen, node, name: str):
    what = f"T.warp_reduce_{name}"
    _kernel_code(gen, node, what)
    a = _args(gen, node, getattr(warp, f"warp_reduce_{name}"))
    value = gen.eval(a["value"])
    if isinstance(value, Affine):
        value = Scalar(gen.index(value, a["value"], "a reduced value"), "index")
    if not isinstance(value, Scalar):
        raise gen.error(a["value"], f"{what} reduces a run-time scalar, got "
                                    f"{gen.describe(value)}")
    dt, wide = _shuffled_types(gen, value, a["value"], what)
    fop, sop, uop = _WARP_COMBINE[name]
    op = fop if dtypes.is_float(dt) else (uop if wide == "uint32" else sop)
    if op is None:
        raise gen.error(a["value"], f"{what} takes integers, got {dt}")
    v = gen.to_value(value, wide, a["value"])
    i32 = ir.IntegerType.get_signless(32)
    for delta in (16, 8, 4, 2, 1):
        v = op(v, _shfl(v, arith.constant(i32, delta), "shfl_xor"))
    out = Scalar(v, wide)
    return out if wide == dt else Scalar(gen.to_value(out, dt, a["value"]), dt)


def call_warp_reduce_sum(gen, node):
    return _warp_reduce(gen, node, "sum")


def call_warp_reduce_max(gen, node):
    return _warp_reduce(gen, node, "max")


def call_warp_reduce_min(gen, node):
    return _warp_reduce(gen, node, "min")


def call_warp_reduce_bitand(gen, node):
    return _warp_reduce(gen, node, "bitand")


def call_warp_reduce_bitor(gen, node):
    return _warp_reduce(gen, node, "bitor")


def call_shfl_xor(gen, node):
    return _shuffle(gen, node, "shfl_xor")


def call_shfl_down(gen, node):
    return _shuffle(gen, node, "shfl_down")


def call_shfl_up(gen, node):
    return _shuffle(gen, node, "shfl_up")


def call_shfl_sync(gen, node):
    return _shuffle(gen, node, "shfl_sync")


def call_tvm_warp_shuffle(gen, node):
    """TVM's (mask, value, lane, width, warp_size) spelling of T.shfl_sync."""
    import ast

    a = _args(gen, node, warp.tvm_warp_shuffle)
    # TVM's logical warp size, which CUDA's __shfl_sync (what TVM lowers it to on NVIDIA
    # GPUs) has no operand for: checked, not otherwise used; `width` groups the lanes.
    size = gen.eval_static(a["warp_size"])
    if isinstance(size, bool) or not isinstance(size, int) or size not in (1, 2, 4, 8, 16, 32):
        raise gen.error(a["warp_size"], "T.tvm_warp_shuffle's warp_size is a power of two up "
                                        f"to 32, got {size!r}")
    call = ast.Call(func=node.func, args=[a["value"], a["lane"], a["width"], a["mask"]],
                    keywords=[])
    return _shuffle(gen, ast.copy_location(call, node), "shfl_sync")


_VOTES = {"any_sync": "any", "all_sync": "all", "ballot_sync": "ballot", "ballot": "ballot"}


def _vote(gen, node, name: str):
    """nvvm.vote.sync over the whole warp: any/all as an int32 0 or 1, a
    ballot's 32 bits zero-extended to a uint64 (TileLang's types)."""
    what = f"T.{name}"
    _kernel_code(gen, node, what)
    a = _args(gen, node, getattr(warp, name))
    if name != "ballot":
        _whole_warp(gen, a, what, "votes")
    i1, i32 = ir.IntegerType.get_signless(1), ir.IntegerType.get_signless(32)
    p = _predicate(gen, a["predicate"], f"{what} votes on")
    kind = _VOTES[name]
    op = ir.Operation.create(
        "nvvm.vote.sync", results=[i32 if kind == "ballot" else i1],
        operands=[arith.constant(i32, -1), p],
        attributes={"kind": ir.Attribute.parse(f"#nvvm<vote_sync_kind {kind}>")})
    if kind == "ballot":
        return Scalar(arith.extui(ir.IntegerType.get_signless(64), op.results[0]), "uint64")
    return Scalar(arith.extui(i32, op.results[0]), "int32")


def call_any_sync(gen, node):
    return _vote(gen, node, "any_sync")


def call_all_sync(gen, node):
    return _vote(gen, node, "all_sync")


def call_ballot_sync(gen, node):
    return _vote(gen, node, "ballot_sync")


def call_ballot(gen, node):
    return _vote(gen, node, "ballot")


# The PTX of T.activemask (no NVVM op has it); the interpreter knows the string.
ACTIVEMASK_PTX = "activemask.b32 $0;"


def call_activemask(gen, node):
    """`activemask.b32`: the lanes running it, also under an `if` only some take."""
    _kernel_code(gen, node, "T.activemask")
    _args(gen, node, warp.activemask)
    i32 = ir.IntegerType.get_signless(32)
    op = ir.Operation.create(
        "llvm.inline_asm", results=[i32], operands=[],
        attributes={"asm_string": ir.StringAttr.get(ACTIVEMASK_PTX),
                    "constraints": ir.StringAttr.get("=r"),
                    "has_side_effects": ir.UnitAttr.get()})
    return Scalar(arith.extui(ir.IntegerType.get_signless(64), op.results[0]), "uint64")


# The block barriers that reduce a predicate (bar.red): the PTX of each, an
# i32 result from an i32 predicate (0 or not).
BARRIER_REDUCTIONS = {
    "syncthreads_count": "{ .reg .pred p; setp.ne.u32 p, $1, 0; bar.red.popc.u32 $0, 0, p; }",
    "syncthreads_and": "{ .reg .pred p, q; setp.ne.u32 p, $1, 0; bar.red.and.pred q, 0, p; "
                       "selp.u32 $0, 1, 0, q; }",
    "syncthreads_or": "{ .reg .pred p, q; setp.ne.u32 p, $1, 0; bar.red.or.pred q, 0, p; "
                      "selp.u32 $0, 1, 0, q; }",
}


def _predicate(gen, node, takes: str):
    """The i1 of an integer or bool predicate at `node` (a run-time value, an
    index expression or a constant); `takes` begins the error otherwise."""
    pred = gen.eval(node)
    if isinstance(pred, Affine):
        pred = Scalar(gen.index(pred, node, "a predicate"), "index")
    if isinstance(pred, int):  # also a bool
        pred = Scalar(arith.constant(ir.IntegerType.get_signless(1), int(bool(pred))), "bool")
    if not isinstance(pred, Scalar) or dtypes.is_float(pred.dtype):
        raise gen.error(node, f"{takes} an integer or bool scalar, got {gen.describe(pred)}")
    return gen.to_value(pred, "bool", node)


def _barrier_reduction(gen, node, name: str):
    what = f"T.{name}"
    _kernel_code(gen, node, what)
    a = _args(gen, node, getattr(warp, name))
    i32 = ir.IntegerType.get_signless(32)
    p = arith.extui(i32, _predicate(gen, a["predicate"], f"{what} takes"))
    op = ir.Operation.create(
        "llvm.inline_asm", results=[i32], operands=[p],
        attributes={"asm_string": ir.StringAttr.get(BARRIER_REDUCTIONS[name]),
                    "constraints": ir.StringAttr.get("=r,r"),
                    "has_side_effects": ir.UnitAttr.get()})
    return Scalar(op.results[0], "int32")


def call_syncthreads_count(gen, node):
    return _barrier_reduction(gen, node, "syncthreads_count")


def call_syncthreads_and(gen, node):
    return _barrier_reduction(gen, node, "syncthreads_and")


def call_syncthreads_or(gen, node):
    return _barrier_reduction(gen, node, "syncthreads_or")


def call_sync_threads(gen, node):
    from ..dialects import gpu

    what = "T.sync_threads"
    _kernel_code(gen, node, what)
    a = _args(gen, node, warp.sync_threads)
    bar = gen.eval_static(a["barrier_id"])
    count = gen.eval_static(a["arrive_count"])
    threads = math.prod(gen.thread_dims)
    if bar is None and count is None or bar == 0 and count == threads:
        if in_ws_body(gen):
            raise gen.error(node, f"{what}() in a T.ws body waits for every thread of the "
                                  "block, which the other warpgroups' bodies never reach; "
                                  "sync the body's threads with a named barrier, "
                                  f"{what}(barrier_id, arrive_count)")
        gpu.barrier()
        return None
    if bar is None or count is None:
        raise gen.error(node, f"{what}: a named barrier needs both barrier_id and arrive_count")
    bar = _named(gen, what, a["barrier_id"], bar, a["arrive_count"], count, "arrive_count")
    i32 = ir.IntegerType.get_signless(32)
    ir.Operation.create("nvvm.barrier", operands=[arith.constant(i32, bar),
                                                  arith.constant(i32, count)],
                        attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1, 0])})
    return None


def _named(gen, what, bar_node, bar, count_node, count, count_name) -> int:
    """Checks a named barrier's id and thread count; returns the hardware
    barrier that id names in this kernel. Ids 9 to 15 are themselves; ids 1 to
    8, which the compiler keeps for warpgroups, are the program's names for
    the free ones (15, 14, ... in the order the kernel first uses them), so a
    program written with TileLang's `T.sync_threads(3, 256)` keeps its
    pairing."""
    threads = math.prod(gen.thread_dims)
    if isinstance(bar, bool) or not isinstance(bar, int) or not 1 <= bar <= 15:
        raise gen.error(bar_node, f"{what}: barrier_id must be 1 to 15 (0 is the block's), "
                                  f"got {bar!r}")
    if isinstance(count, bool) or not isinstance(count, int) or count < 32 or count % 32 or \
            count > threads:
        raise gen.error(count_node, f"{what}: {count_name} must be a multiple of 32 up to the "
                                    f"block's {threads} threads, got {count!r}")
    names = gen.__dict__.setdefault("named_barriers", {})
    kernel = names.setdefault(id(gen.kernel), {})  # program id -> hardware id
    if bar in kernel:
        return kernel[bar]
    taken = set(kernel.values())
    if bar >= _FIRST_ID:
        if bar in taken:
            raise gen.error(bar_node, f"{what}: barrier {bar} already stands for barrier "
                                      f"{next(k for k, v in kernel.items() if v == bar)} of "
                                      "this kernel (ids 1 to 8 take the free barriers from 15 "
                                      "down); use another id")
        kernel[bar] = bar
        return bar
    free = [b for b in range(15, _FIRST_ID - 1, -1) if b not in taken]
    if not free:
        raise gen.error(bar_node, f"{what}: this kernel uses more named barriers than the "
                                  f"{16 - _FIRST_ID} the program has ({_FIRST_ID} to 15)")
    kernel[bar] = free[0]
    return free[0]


def call_named_barrier_arrive(gen, node):
    what = "T.named_barrier_arrive"
    _kernel_code(gen, node, what)
    a = _args(gen, node, warp.named_barrier_arrive)
    bar, count = gen.eval_static(a["barrier_id"]), gen.eval_static(a["thread_count"])
    bar = _named(gen, what, a["barrier_id"], bar, a["thread_count"], count, "thread_count")
    i32 = ir.IntegerType.get_signless(32)
    ir.Operation.create("nvvm.barrier.arrive",
                        operands=[arith.constant(i32, bar), arith.constant(i32, count)])
    return None


def call_sync_warp(gen, node):
    what = "T.sync_warp"
    _kernel_code(gen, node, what)
    a = _args(gen, node, warp.sync_warp)
    mask = gen.eval_static(a["mask"])
    if mask not in (None, warp.FULL_MASK, -1):
        raise gen.error(a["mask"], f"{what}: tlc syncs the whole warp (mask 0xFFFFFFFF); "
                                   f"got {mask!r}")
    i32 = ir.IntegerType.get_signless(32)
    ir.Operation.create("nvvm.bar.warp.sync",
                        operands=[arith.constant(i32, -1)])
    return None


# T.sync_grid: a block barrier; then one thread of each block adds the block to
# the counter at $0 (release, after a fence) and waits until every block of
# the grid has (acquire); then the block barrier again. The counter only
# grows: a block's arrival at its k-th barrier finds it in [k n, (k + 1) n)
# for n blocks (none can pass barrier k before all reached it), so the
# goal is the next multiple of n.
GRID_SYNC_PTX = (
    "{ .reg .pred p, q; .reg .u32 t, m, n, old, goal, now; "
    "bar.sync 0; "
    "mov.u32 t, %tid.x; mov.u32 m, %tid.y; or.b32 t, t, m; mov.u32 m, %tid.z; or.b32 t, t, m; "
    "setp.ne.u32 p, t, 0; "
    "@p bra SKIP_${:uid}; "
    "mov.u32 n, %nctaid.x; mov.u32 m, %nctaid.y; mul.lo.u32 n, n, m; "
    "mov.u32 m, %nctaid.z; mul.lo.u32 n, n, m; "
    "fence.acq_rel.gpu; "
    "atom.add.release.gpu.global.u32 old, [$0], 1; "
    "div.u32 goal, old, n; add.u32 goal, goal, 1; mul.lo.u32 goal, goal, n; "
    "WAIT_${:uid}: "
    "ld.acquire.gpu.global.u32 now, [$0]; "
    "setp.lt.u32 q, now, goal; "
    "@q bra WAIT_${:uid}; "
    "SKIP_${:uid}: "
    "bar.sync 0; }")


def call_sync_grid(gen, node):
    """T.sync_grid(): GRID_SYNC_PTX on the kernel's barrier counter (a
    zero-filled T.alloc_global tensor of one int32, one per kernel), the
    kernel marked tile.cooperative (a cooperative launch)."""
    from ..dialects import memref
    from .global_scratch import _add_argument

    _kernel_code(gen, node, "T.sync_grid")
    _args(gen, node, warp.sync_grid)
    if in_ws_body(gen):
        raise gen.error(node, "T.sync_grid inside T.ws: every thread of every block must reach "
                              "it; call it in the kernel's own code")
    # One counter per kernel (their block counts differ), found by the op.
    kernel = gen.kernel.operation
    counter = next((c for op, c in gen.grid_barriers if op == kernel), None)
    if counter is None:
        counter = _add_argument(gen, node, f"grid_barrier{len(gen.grid_barriers)}", [1],
                                "int32", {"tile.zero_fill": ir.UnitAttr.get()})
        gen.scratch += 1
        gen.grid_barriers.append((kernel, counter))
        gen.kernel.attributes["tile.cooperative"] = ir.UnitAttr.get()
    index = memref.extract_aligned_pointer_as_index(counter)
    address = arith.index_cast(ir.IntegerType.get_signless(64), index)
    ir.Operation.create(
        "llvm.inline_asm", results=[], operands=[address],
        attributes={"asm_string": ir.StringAttr.get(GRID_SYNC_PTX),
                    "constraints": ir.StringAttr.get("l,~{memory}"),
                    "has_side_effects": ir.UnitAttr.get()})
