"""Hand-written warp specialization: `with T.ws(...)` (a tile.ws region),
T.alloc_barrier (a shared i64 buffer and its tile.init_barriers), and the
waits and arrivals on those barriers (tile.barrier_wait / barrier_arrive)."""

from __future__ import annotations

import ast
import math

from .. import ir
from ..dialects import arith, tile
from ..language import warp_specialize
from .intrinsic_args import bind_args
from . import ws_pipeline
from .values import Affine, BufferRef, Scalar

WARPGROUP = 128
# mbarrier arrival counts are 20-bit.
MAX_ARRIVALS = (1 << 20) - 1


def _enclosing_ops(gen):
    """The ops the insertion point is nested in, innermost first."""
    op = ir.InsertionPoint.current.block.owner
    while op is not None:
        op = op.operation
        yield op
        op = op.parent


def in_ws_body(gen) -> bool:
    """Whether the code being built is inside a `with T.ws(...)` body."""
    return any(op.name == "tile.ws" for op in _enclosing_ops(gen))


def in_every_thread(gen) -> bool:
    """Whether the code being built runs in every thread of the block: the
    kernel's own code, or serial loops in it (no branch, T.ws or T.Parallel)."""
    for op in _enclosing_ops(gen):
        if op.name == "tile.kernel":
            return not gen.parallel_depth
        if op.name != "scf.for":
            return False
    return False


def check_tma_arrived(gen) -> None:
    """At the end of a T.ws body or kernel: each T.tma_copy met its arrival."""
    if gen.pending_tma:
        node = gen.pending_tma[0][0]
        raise gen.error(node, "T.tma_copy's barrier gets no T.barrier_arrive after it in "
                              "the code that issues it: the load's bytes would never be "
                              "expected on it")


def warp_groups(gen, call, body) -> None:
    """with T.ws(*warpgroups): the body in a tile.ws region."""
    gen.require_kernel(call, "T.ws")
    if gen.parallel_depth:
        raise gen.error(call, "T.ws cannot be inside T.Parallel")
    a = bind_args(gen, call, warp_specialize.ws)
    nodes = a["warp_group_idx"]
    if not nodes:
        raise gen.error(call, "T.ws needs at least one warpgroup index: `with T.ws(1):`")
    groups = [gen.eval_int(n, "a warpgroup index") for n in nodes]
    threads = math.prod(gen.thread_dims)
    for n, g in zip(nodes, groups):
        if g < 0 or WARPGROUP * (g + 1) > threads:
            raise gen.error(n, f"warpgroup {g} is not in the block: its {threads} threads "
                               f"make {threads // WARPGROUP} warpgroup(s) of {WARPGROUP}")
    if threads % WARPGROUP:
        raise gen.error(call, f"T.ws needs a block of whole warpgroups (threads a multiple "
                              f"of {WARPGROUP}), the kernel has {threads}")
    if groups != list(range(groups[0], groups[0] + len(groups))):
        raise gen.error(call, f"T.ws takes ascending, contiguous warpgroups, got "
                              f"{tuple(groups)}")
    build_ws(gen, call, groups, body)


def build_ws(gen, call, groups: list[int], body, unit: str = "warpgroups") -> None:
    """The tile.ws region of `groups` (checked; warpgroups, or warps when
    `unit` is "warps": of whole warpgroups where they make some) holding
    `body`, built at `call` (a `with T.ws(...)`, or a branch on the thread
    index)."""
    if unit == "warps" and groups[0] % 4 == 0 and len(groups) % 4 == 0:
        groups, unit = list(range(groups[0] // 4, groups[0] // 4 + len(groups) // 4)), \
            "warpgroups"
    for op in _enclosing_ops(gen):
        name = op.name
        if name == "tile.ws":
            raise gen.error(call, "T.ws cannot be nested in another T.ws")
        if name == "tile.pipelined":
            raise gen.error(call, (
                "a warpgroup body inside a T.Pipelined loop the compiler pipelines: tlc "
                "stages a loop of T.ws bodies when `with T.ws(...)` (or the `if` on the "
                "thread index) is written in the loop's own body, not built by a T.macro "
                "(write it in the loop, or use num_stages=0 and stage the buffers with "
                "T.alloc_barrier barriers, or drop T.ws and let the compiler specialize the "
                "loop)"))
    with gen.loc(call):
        op = tile.WarpGroupsOp(**{unit: groups})
    block = op.body.blocks.append()
    outer, gen.pending_tma = gen.pending_tma, []
    with ir.InsertionPoint(block), gen.region("if", call):
        gen.visit_body(body)
    check_tma_arrived(gen)
    gen.pending_tma = outer


def call_ws(gen, node):
    raise gen.error(node, "T.ws is used as `with T.ws(...):`")


def call_alloc_barrier(gen, node):
    """T.alloc_barrier(arrive_count): a shared buffer of mbarriers, initialised
    here (directly in the kernel's body)."""
    gen.require_kernel(node, "T.alloc_barrier")
    a = bind_args(gen, node, warp_specialize.alloc_barrier)
    counts = gen.eval_static(a["arrive_count"])
    single = isinstance(counts, int) and not isinstance(counts, bool)
    if single:
        counts = [counts]
    if not isinstance(counts, (list, tuple)) or not counts or any(
            isinstance(c, bool) or not isinstance(c, int) for c in counts):
        raise gen.error(a["arrive_count"], "arrive_count must be a compile-time integer or a "
                                           f"non-empty list of them, got {counts!r}")
    for c in counts:
        if not 1 <= c <= MAX_ARRIVALS:
            raise gen.error(a["arrive_count"], f"an arrival count must be in [1, "
                                               f"{MAX_ARRIVALS}], got {c}")
    owner = ir.InsertionPoint.current.block.owner
    if gen.parallel_depth or owner is None or owner.operation.name != "tile.kernel":
        raise gen.error(node, "T.alloc_barrier must be directly in the kernel's body (not in "
                              "a loop, a branch or T.ws), where every thread initialises it")
    space = ir.Attribute.parse("#gpu.address_space<workgroup>")
    t = ir.MemRefType.get([len(counts)], ir.IntegerType.get_signless(64), memory_space=space)
    name = gen.assigned_name(node)
    loc = ir.Location.name(name, childLoc=gen.loc(node)) if name else gen.loc(node)
    value = tile.alloc_shared(t, loc=loc)
    tile.InitBarriersOp(value, list(counts), loc=loc)
    return BufferRef("", value, [len(counts)], "uint64", "barrier")


def _barrier(gen, node, what: str):
    """(buffer, index value) of a barrier operand: `bar` (one barrier) or
    `bars[i]`."""
    if isinstance(node, ast.Subscript):
        buf = gen.eval(node.value)
        if isinstance(buf, BufferRef) and buf.place == "barrier":
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if len(items) != 1:
                raise gen.error(node, f"'{buf.name}' is a 1-d list of barriers: index it "
                                      "with one integer")
            i = gen.check_index(gen.eval(items[0]), items[0], "a barrier index")
            if isinstance(i, int) and not 0 <= i < buf.shape[0]:
                raise gen.error(items[0], f"barrier {i} is out of range: '{buf.name}' has "
                                          f"{buf.shape[0]}")
            return buf, ws_pipeline.barrier_index(buf, i)
    value = gen.eval(node)
    if not isinstance(value, BufferRef) or value.place != "barrier":
        raise gen.error(node, f"{what} takes a barrier of T.alloc_barrier (`bar` or "
                              f"`bars[i]`), got {gen.describe(value)}")
    if value.shape[0] != 1:
        raise gen.error(node, f"'{value.name}' holds {value.shape[0]} barriers: name one, "
                              f"`{value.name}[i]`")
    return value, ws_pipeline.barrier_index(value, 0)


def _wait(gen, node, fn, what: str) -> None:
    gen.require_kernel(node, what)
    if gen.parallel_depth:
        raise gen.error(node, f"{what} runs once per thread: it cannot be inside T.Parallel")
    a = bind_args(gen, node, fn)
    buf, index = _barrier(gen, a["mbarrier"], what)
    parity = gen.eval(a["parity"])
    if not isinstance(parity, (int, Affine, Scalar)) or isinstance(parity, bool):
        raise gen.error(a["parity"], f"the parity must be an integer, got "
                                     f"{gen.describe(parity)}")
    with gen.loc(node):
        parity = (gen.index(parity, a["parity"], "the parity") if buf.stage is None else
                  ws_pipeline.staged_parity(gen, buf.stage, a["parity"]))
        tile.BarrierWaitOp(buf.value, index, parity)


def _arrive(gen, node, fn, what: str, unsupported=None, mbarrier_arg: str = "mbarrier") -> None:
    """Every thread that runs it arrives once at the barrier; with a `cta_id`
    (T.mbarrier_arrive's) at that barrier of another block of the cluster."""
    gen.require_kernel(node, what)
    if gen.parallel_depth:
        raise gen.error(node, f"{what} runs once per thread: it cannot be inside T.Parallel")
    a = bind_args(gen, node, fn, unsupported)
    buf, index = _barrier(gen, a[mbarrier_arg], what)
    cta = a.get("cta_id")
    if cta is not None and not (isinstance(cta, ast.Constant) and cta.value is None):
        if gen.pending_tma:
            raise gen.error(gen.pending_tma[0][0], "T.tma_copy's barrier gets no "
                                                   "T.barrier_arrive of this block after it "
                                                   f"({what} at line {node.lineno} arrives at "
                                                   "another block's)")
        _remote_arrive(gen, node, cta, buf, index, what)
        return
    key = (id(buf), ast.dump(a[mbarrier_arg]))
    for copy_node, copy_key in gen.pending_tma:
        if copy_key != key:
            raise gen.error(copy_node, "T.tma_copy's barrier is not the one the next arrival "
                                       f"after it ({what} at line {node.lineno}) "
                                       "arrives at: tlc completes the load on that arrival")
    gen.pending_tma = []
    with gen.loc(node):
        tile.BarrierArriveOp(buf.value, index)


def _remote_arrive(gen, node, cta_node, buf, index, what: str) -> None:
    """An arrival at barrier `index` of `buf` in block `cta_node` of the
    cluster: its shared memory through mapa, after a fence of the thread's
    async-proxy accesses (as a local arrival has). It releases at CTA scope,
    as TileLang's and CUTLASS's remote arrivals do: one at cluster scope made
    a multicast GEMM pipeline 2.3x slower (bench/results/2026-12-06/session33)."""
    from .cluster import require_clusters

    size = math.prod(require_clusters(gen, cta_node, f"{what}'s cta_id"))
    cta = gen.eval(cta_node)
    if isinstance(cta, int) and not isinstance(cta, bool) and not 0 <= cta < size:
        raise gen.error(cta_node, f"{what}: cta_id {cta} is not a block of this cluster of "
                                  f"{size}")
    i32 = ir.IntegerType.get_signless(32)
    with gen.loc(node):
        cta = arith.index_cast(i32, gen.index(cta, cta_node, "cta_id"))
        local = tile.SharedPtrOp(ir.Type.parse("!llvm.ptr<3>"), buf.value, [index]).result
        remote = ir.Operation.create("nvvm.mapa", results=[ir.Type.parse("!llvm.ptr<7>")],
                                     operands=[local, cta]).result
        ir.Operation.create("nvvm.fence.proxy", attributes={
            "kind": ir.Attribute.parse("#nvvm.proxy_kind<async.shared>"),
            "space": ir.Attribute.parse("#nvvm.shared_space<cta>")})
        ir.Operation.create("nvvm.mbarrier.arrive", operands=[remote])


def call_barrier_wait(gen, node):
    _wait(gen, node, warp_specialize.barrier_wait, "T.barrier_wait")


def call_mbarrier_wait_parity(gen, node):
    _wait(gen, node, warp_specialize.mbarrier_wait_parity, "T.mbarrier_wait_parity")


def call_barrier_arrive(gen, node):
    _arrive(gen, node, warp_specialize.barrier_arrive, "T.barrier_arrive")


def call_mbarrier_arrive(gen, node):
    _arrive(gen, node, warp_specialize.mbarrier_arrive, "T.mbarrier_arrive")


_TMA_COPY_UNSUPPORTED = {
    "leader_scope_threads": "the first thread of the T.ws body issues the load",
    "eviction_policy": "cache eviction hints",
    "annotations": "TileLang's lowering annotations",
}


def _cluster_mask(gen, node) -> int:
    """T.tma_copy's cluster_mask: a compile-time bit mask of the kernel's cluster."""
    from .cluster import require_clusters

    size = math.prod(require_clusters(gen, node, "T.tma_copy's cluster_mask"))
    mask = gen.eval_static(node)
    if isinstance(mask, bool) or not isinstance(mask, int) or not 0 < mask < 1 << size:
        raise gen.error(node, f"T.tma_copy's cluster_mask must be a compile-time bit mask of "
                              f"this cluster's {size} blocks (1 to {(1 << size) - 1}), got "
                              f"{mask!r}")
    return mask


def call_tma_copy(gen, node):
    """T.tma_copy(src, dst, barrier=bar): a T.copy the compiler must make a
    TMA load completing on `bar` (tile-insert-mbarriers does, at the next
    arrival on `bar` of the T.ws body, or of the whole block where the kernel's
    own code issues it, or reports why it cannot)."""
    gen.require_kernel(node, "T.tma_copy")
    a = bind_args(gen, node, warp_specialize.tma_copy, _TMA_COPY_UNSUPPORTED)
    if "barrier" not in a.given:
        raise gen.error(node, "T.tma_copy loads need barrier=... (a barrier of T.alloc_barrier "
                              "the load completes on); stores: use T.copy")
    if not in_ws_body(gen) and not in_every_thread(gen):
        raise gen.error(node, "T.tma_copy is issued by one thread for a group that then "
                              "arrives on its barrier: use it in a T.ws body or in code every "
                              "thread of the block runs (not in a branch or T.Parallel), "
                              "before that code's T.barrier_arrive on its barrier")
    buf, _ = _barrier(gen, a["barrier"], "T.tma_copy's barrier")
    from .intrinsics import mark_copies

    extra = {}
    if "cluster_mask" in a.given and gen.eval_static(a["cluster_mask"]) is not None:
        extra["tile.cluster_mask"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64),
                                                        _cluster_mask(gen, a["cluster_mask"]))
    mark_copies(gen, node, a["src"], a["dst"], "tile.tma_required",
                "T.tma_copy copies tiles of a tensor in its declared layout; a tensor with a "
                "T.Layout, or one element, is copied element by element (T.copy)", extra)
    gen.pending_tma.append((node, (id(buf), ast.dump(a["barrier"]))))


def _max_nreg(gen, node, fn, what: str, increase=None) -> None:
    gen.require_kernel(node, what)
    a = bind_args(gen, node, fn)
    count = gen.eval_int(a["reg_count"], "reg_count")
    if increase is None:
        inc = gen.eval_int(a["is_inc"], "is_inc")
        if inc not in (0, 1):
            raise gen.error(a["is_inc"], f"is_inc is 1 (raise) or 0 (lower), got {inc}")
        increase = inc == 1
    if not (24 <= count <= 256 and count % 8 == 0):
        raise gen.error(a["reg_count"], f"setmaxnreg takes a multiple of 8 in [24, 256] "
                                        f"registers, got {count}")
    if gen.parallel_depth or not in_ws_body(gen):
        raise gen.error(node, f"{what} changes a warpgroup's registers: use it in a T.ws body "
                              "(each of its warpgroups runs it whole)")
    # A block of n threads starts with 65536 / n registers a thread (a multiple of 8);
    # with 256 or fewer that is the 255 a thread may use anyway, no count ptxas can
    # know at the kernel's entry, and it drops the setmaxnreg (C7508).
    threads = math.prod(gen.thread_dims)
    entry = 65536 // threads // 8 * 8
    if entry > 255:
        raise gen.error(node, f"{what} needs a block of at least 384 threads (three "
                              f"warpgroups): a thread of a {threads}-thread block may use "
                              f"255 registers from the start, so there is no count to move "
                              f"and ptxas would ignore it")
    if increase and count < entry or not increase and count > entry:
        raise gen.error(a["reg_count"], f"{what}: a thread of this {threads}-thread block "
                                        f"starts with {entry} registers; "
                                        f"{'raising' if increase else 'lowering'} them to "
                                        f"{count} is not {'a raise' if increase else 'a cut'}")
    ws = next(op for op in _enclosing_ops(gen) if op.name == "tile.ws")
    if "warpgroups" not in ws.attributes:
        raise gen.error(node, f"{what} changes a warpgroup's registers: this branch runs on "
                              "part of a warpgroup (its thread bounds are not multiples of "
                              "128)")
    gen.register_counts.append((node, list(ir.DenseI64ArrayAttr(ws.attributes["warpgroups"])),
                                count, increase))
    action = "increase" if increase else "decrease"
    with gen.loc(node):
        ir.Operation.create("nvvm.setmaxregister", attributes={
            "regCount": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), count),
            "action": ir.Attribute.parse(f"#nvvm<action {action}>")})


def check_register_counts(gen) -> None:
    """The registers the kernel's T.set_max_nreg calls leave each warpgroup (its
    last count; the block's starting count where it sets none) must fit in the
    block's: a raise waits for registers the other warpgroups give up, forever
    when they do not."""
    if not gen.register_counts:
        return
    threads = math.prod(gen.thread_dims)
    entry = 65536 // threads // 8 * 8
    counts = [entry] * (threads // WARPGROUP)
    for _, groups, count, _ in gen.register_counts:
        for g in groups:
            counts[g] = count
    if sum(counts) > entry * len(counts):
        node = [n for n, _, _, increase in gen.register_counts if increase][-1]
        raise gen.error(node, f"the warpgroups' registers a thread "
                              f"({' + '.join(map(str, counts))} = {sum(counts)}) exceed the "
                              f"{entry * len(counts)} a {threads}-thread block has "
                              f"({len(counts)} x {entry}): a raise would wait forever for "
                              f"registers the other warpgroups never give up")


def call_set_max_nreg(gen, node):
    _max_nreg(gen, node, warp_specialize.set_max_nreg, "T.set_max_nreg")


def call_inc_max_nreg(gen, node):
    _max_nreg(gen, node, warp_specialize.inc_max_nreg, "T.inc_max_nreg", increase=True)


def call_dec_max_nreg(gen, node):
    _max_nreg(gen, node, warp_specialize.dec_max_nreg, "T.dec_max_nreg", increase=False)
