"""The T.* intrinsics: each builds the tile IR of one language construct."""

from __future__ import annotations

import ast
import inspect
import math

from .. import ir
from ..errors import CompilationError
from ..dialects import arith, memref, scf, tile
from ..language import debug, loops, memory, tile_ops
from ..language.policy import GemmWarpPolicy
from . import dtypes, loop_exits, pipeline_schedule, variables, ws_pipeline
from .intrinsic_args import batch_of_one
from .intrinsic_args import bind_args as _args
from .intrinsic_args import known_int, static_bool, static_shape
from .intrinsic_args import parse_dtype as _dtype
from .values import Affine, BufferRef, Scalar, as_affine, index_value, simplify
from .threads import (call_annotate_min_blocks_per_sm,  # noqa: F401
                      call_disable_warp_group_reg_alloc, call_get_block_binding,
                      call_no_set_max_nreg, call_get_thread_binding, call_thread_binding,
                      check_divergence, thread_dims)
from .variables import call_alloc_var  # noqa: F401  (T.alloc_var)
from . import reducers
from .reducers import call_alloc_reducer, call_finalize_reducer  # noqa: F401
from .global_scratch import call_alloc_global  # noqa: F401  (T.alloc_global)
from .atomics import (call_atomic_add, call_atomic_addx2, call_atomic_addx4,  # noqa: F401
                      call_atomic_load, call_atomic_max, call_atomic_min, call_atomic_store)
from .scans import call_cummax, call_cumsum  # noqa: F401
from .buffer_views import call_reshape, call_view, viewed  # noqa: F401  (T.reshape, T.view)
from .warp import (call_activemask, call_all_sync, call_any_sync,  # noqa: F401
                   call_ballot, call_ballot_sync, call_get_lane_idx, call_get_warp_group_idx,
                   call_get_warp_idx, call_get_warp_idx_sync, call_shfl_down, call_shfl_sync,
                   call_sync_grid, call_syncthreads_and, call_syncthreads_count,
                   call_syncthreads_or,
                   call_tvm_warp_shuffle, call_warp_reduce_bitand, call_warp_reduce_bitor,
                   call_warp_reduce_max, call_warp_reduce_min, call_warp_reduce_sum,
                   call_shfl_up, call_shfl_xor, call_sync_threads, call_sync_warp,
                   call_named_barrier_arrive)
from .im2col import call_c2d_im2col, call_im2col  # noqa: F401  (T.c2d_im2col, T.im2col)
from .tensor_views import call_make_tensor  # noqa: F401  (T.make_tensor)
from .column_split import ColumnPieces, check_whole_operand, column_ranges, piece_of
from .stages import stage_of
from .cp_async import (call_access_ptr, call_cp_async_barrier_noinc,  # noqa: F401
                       call_ptx_cp_async)
from . import cluster
from .cluster import (call_block_rank_in_cluster, call_cluster_arrive,  # noqa: F401
                      call_cluster_arrive_relaxed, call_cluster_sync, call_cluster_wait)
from .warp_groups import (call_alloc_barrier, call_barrier_arrive,  # noqa: F401
                          call_barrier_wait, call_dec_max_nreg, call_inc_max_nreg,
                          call_mbarrier_arrive, call_mbarrier_wait_parity,
                          call_set_max_nreg, call_tma_copy, call_ws,
                          check_register_counts, check_tma_arrived)

# TileLang keywords tlc rejects (takes effect or error: none is dropped).
_KERNEL_UNSUPPORTED = {
    "prelude": "CUDA source prepended to the kernel",
    "is_cpu": "tlc compiles for NVIDIA GPUs only",
}
_ANNOTATIONS = {"annotations": "TileLang's lowering annotations"}
_PARALLEL_UNSUPPORTED = {
    "coalesced_width": "tlc picks the vector width of each access itself",
    "loop_layout": "give fragment layouts through layout inference",
    "prefer_async": "cp.async is used in T.Pipelined loops only",
    **_ANNOTATIONS,
}
_UNROLL_UNSUPPORTED = {
    "unroll_factor": "partial unrolling (tlc unrolls a loop of constant bounds whole)",
    **_ANNOTATIONS,
}
_GEMM_UNSUPPORTED = {
    "mbar": "Blackwell's tcgen05 completion barrier (tlc targets sm_80 and sm_90a)",
    **_ANNOTATIONS,
}
_PIPELINED_UNSUPPORTED = {
    "sync": "tlc places a pipelined loop's barriers itself",
    "cross_interval": "tlc schedules a pipelined loop's copies itself",
    "annotations": "TileLang's lowering annotations",
}
_COPY_UNSUPPORTED = {
    "coalesced_width": "tlc picks the vector width of each access itself",
    "eviction_policy": "cache eviction hints",
    "loop_layout": "give fragment layouts through layout inference",
    "prefer_instruction": "tlc picks TMA, cp.async or thread copies itself",
    **_ANNOTATIONS,
}
# The scope strings TileLang's allocators take, per tlc place.
_SCOPES = {
    "shared": ("shared", "shared.dyn"),
    "fragment": ("local.fragment",),
    "local": ("local",),
}

_PLACE_SPACE = {
    "shared": "#gpu.address_space<workgroup>",
    "fragment": "#tile.space<fragment>",
    "local": "#tile.space<local>",
}

# The CUDA launch limits on grid dimensions x, y and z.
MAX_GRID = (2**31 - 1, 65535, 65535)


def _buffer(gen, node, what: str, reducer_ok: bool = False) -> BufferRef:
    var = variables.named(gen, node)
    if var is not None:
        raise gen.error(node, f"{what} must be a buffer; '{var.name}' is a T.alloc_var scalar "
                              f"(assign it: {var.name} = value)")
    value = gen.eval(node)
    if not isinstance(value, BufferRef):
        raise gen.error(node, f"{what} must be a buffer, got {gen.describe(value)}")
    if value.place == "barrier":
        raise gen.error(node, f"{what} must be a buffer; '{value.name}' holds mbarriers (use "
                              "them with T.barrier_wait and T.barrier_arrive)")
    if value.reducer is not None and not reducer_ok:
        reducers.check_use(gen, node, value)
    return value


# -- kernel and loops ----------------------------------------------------------


def kernel(gen, call, target, body) -> None:
    """with T.Kernel(*grid, threads=N) as bx / (bx, by, bz): ..."""
    if gen.in_kernel:
        raise gen.error(call, "T.Kernel cannot be nested in another T.Kernel")
    a = _args(gen, call, loops.Kernel, _KERNEL_UNSUPPORTED)
    grid = [gen.eval(g) for g in a["blocks"]]
    clusters = cluster.cluster_dims(gen, a, grid, call)
    threads = gen.eval_static(a["threads"])
    if threads is None:  # TileLang's "the default"
        threads = inspect.signature(loops.Kernel).parameters["threads"].default
    if not 1 <= len(grid) <= 3:
        raise gen.error(call, f"T.Kernel takes 1 to 3 grid sizes, got {len(grid)}")
    dims, threads = thread_dims(gen, call, threads)
    sizes = []
    for axis, (a, g) in enumerate(zip(call.args, grid)):
        if isinstance(g, int) and not isinstance(g, bool) and g <= 0:
            raise gen.error(a, f"a grid size must be positive, got {g}")
        if isinstance(g, int) and not isinstance(g, bool) and g > MAX_GRID[axis]:
            raise gen.error(a, f"grid dimension {'xyz'[axis]} is {g}, more than the "
                               f"{MAX_GRID[axis]} blocks a launch allows")
        sizes.append(gen.index(g, a, "a grid size"))
    with gen.loc(call):  # the kernel's errors (shared memory budget) point at T.Kernel
        op = tile.KernelOp(sizes, threads)
    if clusters is not None:
        cluster.mark_kernel(op, clusters)
    index = ir.IndexType.get()
    block = op.body.blocks.append(*([index] * len(sizes)))
    # Each `with T.Kernel` is one launch of the program's sequence, in order.
    gen.kernel, gen.in_kernel = op, True
    gen.thread_dims, gen.uses_thread_index = dims, False
    gen.index_maps, gen.accessed = {}, set()  # T.Layout remaps hold for one kernel
    gen.register_counts = []  # the kernel's T.set_max_nreg calls (warp_groups.py)
    gen.pending_tma = []  # T.tma_copy loads awaiting their arrival (warp_groups.py)
    try:
        with ir.InsertionPoint(block), gen.scope():
            if isinstance(target, ast.Name):  # `as b`: the index, or all of them (TileLang)
                indices = [Affine.leaf(a) for a in block.arguments]
                gen.bind(target.id, indices[0] if len(indices) == 1 else tuple(indices))
            elif target is not None:
                names = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
                if len(names) != len(sizes) or not all(isinstance(n, ast.Name) for n in names):
                    raise gen.error(target, f"T.Kernel with {len(sizes)} grid size(s) gives "
                                            f"{len(sizes)} block indices, to {len(sizes)} "
                                            "names (or to one name, as a tuple)")
                for n, arg in zip(names, block.arguments):
                    gen.bind(n.id, Affine.leaf(arg))
            gen.visit_body(body)
            reducers.check_finalized(gen)
            check_register_counts(gen)
            check_tma_arrived(gen)
            if clusters is not None:  # no block leaves while its cluster may reach it
                with gen.loc(call):
                    cluster.arrive()
                    cluster.wait()
        if gen.uses_thread_index:
            check_divergence(gen, op)
    finally:
        gen.in_kernel = False


def for_loop(gen, node) -> None:
    if node.orelse:
        raise gen.error(node.orelse[0], "`for ... else` is not supported in a prim_func")
    it = node.iter
    fn = gen.eval(it.func) if isinstance(it, ast.Call) else None
    if fn in (gen.T("serial"), gen.T("unroll"), range):
        return _serial(gen, node, unroll=fn is gen.T("unroll"))
    # Loops a `break` / `continue` cannot leave (loop_exits.other_loop).
    with loop_exits.other_loop(gen, node):
        if fn is gen.T("Parallel"):
            return _parallel(gen, node)
        if fn is gen.T("Pipelined"):
            return _pipelined(gen, node)
        if fn is gen.T("vectorized"):
            return _vectorized(gen, node)
        if fn is gen.T("thread_binding"):  # the body runs once in each thread
            gen.assign(node.target, call_thread_binding(gen, it), node)
            return gen.visit_body(node.body)
        if fn is gen.T("Persistent"):
            from .persistent import persistent_loop

            return persistent_loop(gen, node)
        values = gen.eval_static(it)
        try:
            items = list(values)
        except TypeError:
            raise gen.error(it, f"cannot loop over {values!r}; use T.Parallel, T.Pipelined, "
                                "T.serial, T.unroll or range") from None
        for v in items:  # a compile-time loop: unrolled
            gen.assign(node.target, v, node)
            gen.visit_body(node.body)


def call_loop_break(gen, node) -> None:
    """T.loop_break(): a `break` (tlc.frontend.loop_exits)."""
    _args(gen, node, loops.loop_break)
    loop_exits.stmt_exit(gen, node, "break")


def _loop_vars(gen, node, count: int) -> list[str]:
    target = node.target
    names = target.elts if isinstance(target, ast.Tuple) else [target]
    if len(names) != count or not all(isinstance(n, ast.Name) for n in names):
        raise gen.error(target, f"expected {count} loop variable(s)")
    return [n.id for n in names]


def _parallel(gen, node) -> None:
    gen.require_kernel(node, "T.Parallel")
    call = node.iter
    extents = _args(gen, call, loops.Parallel, _PARALLEL_UNSUPPORTED)["extents"]
    if not extents:
        raise gen.error(call, "T.Parallel needs at least one extent")
    shape = [gen.eval_int(a, "a T.Parallel extent") for a in extents]
    for a, s in zip(extents, shape):
        if s <= 0:
            raise gen.error(a, f"a T.Parallel extent must be positive, got {s}")
    names = _loop_vars(gen, node, len(shape))
    body = node.body
    if (guarded := _guarded_rows(gen, node, names, shape)) is not None:
        shape, body = guarded
    op = tile.ParallelOp(shape)
    block = op.body.blocks.append(*([ir.IndexType.get()] * len(shape)))
    gen.parallel_depth += 1
    outer = gen.outer_parallel
    gen.outer_parallel = op if outer is None else outer
    try:
        with ir.InsertionPoint(block), gen.region("loop", node, names):
            for n, arg, extent in zip(names, block.arguments, shape):
                gen.bind(n, Affine.leaf(arg))
                gen.ranges[arg] = (0, extent - 1)
            gen.visit_body(body)
    finally:
        gen.parallel_depth -= 1
        gen.outer_parallel = outer


def _guarded_rows(gen, node, names, shape):
    """(shape, body) of a T.Parallel loop whose whole body is `if i < c:` (c a
    compile-time integer below i's extent, no else) and which reads or
    writes a fragment at `i + a * c` (a not from the loop): the loop over
    [0, c) in that dimension, without the `if`, the same iterations doing
    the same work. TileLang's sparse MLA backward writes
    `if bi_i < BS // 2: ... acc[bi_i + s * (BS // 2), d_i]` in a loop over
    BS rows; over BS // 2 rows the fragment index is one tlc places (a
    dimension split in two, `(s, bi_i)`). None for any other loop."""
    if len(node.body) != 1 or not isinstance(node.body[0], ast.If) or node.body[0].orelse:
        return None
    test = node.body[0].test
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or \
            not isinstance(test.ops[0], (ast.Lt, ast.LtE)) or \
            not isinstance(test.left, ast.Name) or test.left.id not in names:
        return None
    bound = test.comparators[0]
    if any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(bound)):
        return None
    c = known_int(gen, bound)
    dim = names.index(test.left.id)
    if c is None:
        return None
    c += isinstance(test.ops[0], ast.LtE)
    if not 0 < c < shape[dim]:
        return None
    var = test.left.id

    def split(x) -> bool:  # `a * c`, `c * a` (a not from the loop) or the constant c
        if any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(x)):
            return False
        if known_int(gen, x) == c:
            return True
        return isinstance(x, ast.BinOp) and isinstance(x.op, ast.Mult) and \
            c in (known_int(gen, x.left), known_int(gen, x.right))

    def shifted(index) -> bool:  # `var + a * c` / `a * c + var`
        if not isinstance(index, ast.BinOp) or not isinstance(index.op, ast.Add):
            return False
        return any(isinstance(v, ast.Name) and v.id == var and split(x)
                   for v, x in ((index.left, index.right), (index.right, index.left)))

    for n in ast.walk(node.body[0]):
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name):
            items = n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice]
            if not any(shifted(i) for i in items):
                continue
            try:
                buf = gen.lookup(n.value.id, n)
            except CompilationError:
                continue
            if isinstance(buf, BufferRef) and buf.place == "fragment":
                return [c if d == dim else e for d, e in enumerate(shape)], node.body[0].body
    return None


def _bounds(gen, call, what: str, fn, unsupported: dict[str, str] | None = None):
    """(start, stop, step) of a loop as Python ints or run-time indices, and
    the call's arguments bound to intrinsic `fn`'s signature."""
    if fn is loops.Pipelined:  # TileLang's order: (start, stop, num_stages, order, ...)
        if not call.args:
            raise gen.error(call, f"{what} takes (stop) or (start, stop), then num_stages, "
                                  "order, stage, sync, group and annotations (step= only by "
                                  "keyword)")
    elif not 1 <= len(call.args) <= 3:
        raise gen.error(call, f"{what} takes (stop), (start, stop) or (start, stop, step), got "
                              f"{len(call.args)} arguments")
    a = _args(gen, call, fn, unsupported)
    bounds = []
    for name in ("start", "stop"):
        v = gen.eval(a[name])
        if isinstance(v, Scalar):
            v = Affine.leaf(gen.index(v, a[name], f"a bound of {what}"))
        elif not (v is None and name == "stop") and not (
                isinstance(v, (int, Affine)) and not isinstance(v, bool)):
            raise gen.error(a[name], f"a bound of {what} must be an integer, got "
                                     f"{gen.describe(v)}")
        bounds.append(v)
    start, stop = bounds if bounds[1] is not None else (0, bounds[0])
    step = gen.eval(a["step"])
    if isinstance(step, bool) or not isinstance(step, int):
        if isinstance(step, (Affine, Scalar)):
            raise gen.error(a["step"], f"the step of {what} must be a compile-time integer")
        raise gen.error(a["step"], f"a bound of {what} must be an integer, got "
                                   f"{gen.describe(step)}")
    if step <= 0:
        raise gen.error(a["step"], f"the step of {what} must be positive, got {step}")
    return start, stop, step, a


def _pipelined(gen, node) -> None:
    gen.require_kernel(node, "T.Pipelined")
    call = node.iter
    start, stop, step, a = _bounds(gen, call, "T.Pipelined", loops.Pipelined,
                                   _PIPELINED_UNSUPPORTED)
    found = ws_pipeline.ws_bodies(gen, node)
    bodies = found[0]
    if bodies and any(k in a.given for k in ("order", "stage", "group")):
        raise gen.error(call, "T.Pipelined's order / stage / group annotations schedule "
                              "copies the compiler pipelines; a loop of T.ws bodies takes "
                              "num_stages only")
    schedule = pipeline_schedule.manual_schedule(gen, node, a)
    if schedule is None:
        # num_stages=None (TileLang's Optional style) is the default depth.
        default = inspect.signature(loops.Pipelined).parameters["num_stages"].default
        stages = (default if gen.eval(a["num_stages"]) is None
                  else gen.eval_int(a["num_stages"], "num_stages"))
        copies_last = False
    else:
        stages, copies_last = schedule
    if stages < 0:
        raise gen.error(a["num_stages"], f"num_stages must be at least 0, got {stages}")
    if bodies:  # without num_stages, TileLang's default: the loop as written
        if "num_stages" not in a.given or gen.eval(a["num_stages"]) is None:
            stages = 0
        return ws_pipeline.build(gen, node, start, stop, step, stages, found,
                                 _sequential_loop)
    if stages == 0:  # TileLang's "no pipelining": a plain sequential loop
        return _sequential_loop(gen, node, start, stop, step)
    (name,) = _loop_vars(gen, node, 1)
    op = tile.PipelinedOp(index_value(start), index_value(stop), index_value(step), stages,
                          copies_last=copies_last)
    block = op.body.blocks.append(ir.IndexType.get())
    with ir.InsertionPoint(block), gen.region("loop", node, [name]):
        gen.bind(name, Affine.leaf(block.arguments[0]))
        _note_range(gen, block.arguments[0], start, stop, step)
        gen.visit_body(node.body)


def _serial(gen, node, unroll: bool) -> None:
    what = "T.unroll" if unroll else ("range" if gen.eval(node.iter.func) is range
                                      else "T.serial")
    # range binds as T.serial does (the same parameters), positionally as in Python.
    if what == "range" and node.iter.keywords:
        raise gen.error(node.iter.keywords[0], "range takes no keyword arguments")
    start, stop, step, a = _bounds(gen, node.iter, what, loops.unroll if unroll else loops.serial,
                                   _UNROLL_UNSUPPORTED if unroll else _ANNOTATIONS)
    (name,) = _loop_vars(gen, node, 1)
    if unroll and "explicit" in a.given and gen.eval_static(a["explicit"]) and not (
            isinstance(start, int) and isinstance(stop, int)):
        raise gen.error(a["explicit"], "T.unroll(explicit=True) needs constant bounds (tlc "
                                       "unrolls those whole at compile time)")
    if unroll and isinstance(start, int) and isinstance(stop, int):
        # T.unroll with constant bounds is unrolled here, with Python's
        # semantics: names assigned in the body keep their values.
        with loop_exits.other_loop(gen, node):
            for i in range(start, stop, step):
                gen.bind(name, i)
                gen.visit_body(node.body)
        return
    gen.require_kernel(node, f"a run-time {what} loop")
    _sequential_loop(gen, node, start, stop, step)


def _vectorized(gen, node) -> None:
    """`for v in T.vectorized(n)` / `(start, stop)`: each thread runs the
    iterations in order; unrolled here (compile-time bounds), so the backend
    sees the iterations' accesses side by side and may merge contiguous ones
    into vector loads and stores."""
    call = node.iter
    a = _args(gen, call, loops.vectorized, _ANNOTATIONS)
    bounds = []
    for name in ("start", "stop"):
        v = gen.eval(a[name])
        if v is None and name == "stop":
            continue
        if isinstance(v, bool) or not isinstance(v, int):
            raise gen.error(a[name], f"T.vectorized needs compile-time integer bounds, got "
                                     f"{gen.describe(v)} (a run-time extent: use T.serial)")
        bounds.append(v)
    start, stop = (0, bounds[0]) if len(bounds) == 1 else bounds
    (name,) = _loop_vars(gen, node, 1)
    for i in range(start, stop):
        gen.bind(name, i)
        gen.visit_body(node.body)


def _sequential_loop(gen, node, start, stop, step, prologue=None) -> None:
    """An scf.for over [start, stop) by step, its variable bound in the body;
    `prologue(index)` builds code at the start of the body, before it."""
    (name,) = _loop_vars(gen, node, 1)
    exits = loop_exits.loop_exits(gen, node)
    loop = scf.ForOp(index_value(start), index_value(stop), index_value(step))
    with ir.InsertionPoint(loop.body), gen.region("loop", node, [name]), \
            loop_exits.loop_body(gen, exits):
        gen.bind(name, Affine.leaf(loop.induction_variable))
        _note_range(gen, loop.induction_variable, start, stop, step)
        if prologue is not None:
            prologue(loop.induction_variable)
        clear = loop_exits.not_broken(exits)
        if clear is None:
            loop_exits.start_iteration(exits)
            gen.visit_body(node.body)
        else:  # after a `break`, the remaining iterations do nothing
            guard = scf.IfOp(clear)
            with ir.InsertionPoint(guard.then_block):
                loop_exits.start_iteration(exits)
                gen.visit_body(node.body)
                scf.YieldOp([])
        scf.YieldOp([])


def _note_range(gen, index, start, stop, step: int) -> None:
    """Records the values a loop index takes when its bounds are constants."""
    if isinstance(start, int) and isinstance(stop, int) and stop > start:
        gen.ranges[index] = (start, start + (stop - start - 1) // step * step)


# -- buffers ---------------------------------------------------------------------


def _alloc(gen, node, place: str, name_node=None):
    _block_work(gen, node, f"T.alloc_{place}")
    a = _args(gen, node, getattr(memory, f"alloc_{place}"))
    scope = gen.eval_static(a["scope"])
    if place == "fragment" and scope == "local":
        place = "local"  # TileLang's T.alloc_fragment(shape, dtype, "local"): T.alloc_local
    if scope not in _SCOPES[place]:
        raise gen.error(a["scope"], f"T.alloc_{place} takes scope "
                                    f"{' or '.join(map(repr, _SCOPES[place]))}, got "
                                    f"{scope!r} (other places have their own T.alloc_*)")
    shape = static_shape(gen, a["shape"], f"a {place} buffer")
    dt = _dtype(gen, a["dtype"])
    _check_on_chip_size(gen, a["shape"], place, shape, dt)
    space = ir.Attribute.parse(_PLACE_SPACE[place])
    t = ir.MemRefType.get(list(shape), dtypes.storage_type(dt), memory_space=space)
    op = {"shared": tile.alloc_shared, "fragment": tile.alloc_fragment,
          "local": tile.alloc_local}[place]
    # The buffer's name rides on its location (a NameLoc around the file:line:col),
    # which the passes keep when they rebuild the allocation: the compiler's IR
    # snapshots name the buffers with it (tlc.layout reads them there).
    name = gen.assigned_name(name_node or node)
    if place == "shared" and name and (ranges := column_ranges(gen, name, shape)):
        pieces = {}
        for lo, hi in ranges:  # one buffer per column slice the program names
            piece = f"{name}[{', '.join([':'] * (len(shape) - 1))}, {lo}:{hi}]"
            t = ir.MemRefType.get([*shape[:-1], hi - lo], dtypes.storage_type(dt),
                                  memory_space=space)
            value = op(t, loc=ir.Location.name(piece, childLoc=ir.Location.current))
            pieces[(lo, hi)] = BufferRef(piece, value, [*shape[:-1], hi - lo], str(dt), place)
        return ColumnPieces(name, shape, str(dt), pieces)
    loc = ir.Location.name(name, childLoc=ir.Location.current) if name else ir.Location.current
    return BufferRef("", op(t, loc=loc), list(shape), str(dt), place)


MAX_ON_CHIP_BYTES = 2**31 - 1  # on-chip buffers are indexed with 32-bit offsets


def _check_on_chip_size(gen, node, place: str, shape, dt) -> None:
    """An on-chip buffer past 32-bit indexing is an error here, before any pass
    computes with its size."""
    elements = 1
    for d in shape:
        elements *= d
    size = elements * max(dt.bits, 8) // 8
    if size > MAX_ON_CHIP_BYTES:
        raise gen.error(node, f"a {place} buffer of shape {tuple(shape)} and dtype {dt} takes "
                              f"{size} bytes; on-chip buffers are indexed with 32-bit offsets "
                              f"(at most {MAX_ON_CHIP_BYTES} bytes)")


def call_alloc_shared(gen, node):
    return _alloc(gen, node, "shared")


def call_alloc_fragment(gen, node):
    return _alloc(gen, node, "fragment")


def call_alloc_local(gen, node):
    return _alloc(gen, node, "local")


_BUFFER_SCOPES = {"global": "global", "shared": "shared", "shared.dyn": "shared",
                  "local.fragment": "fragment", "local": "local"}


def call_alloc_buffer(gen, node):
    """TVM's `T.alloc_buffer(shape, dtype, scope=...)`: by its scope, T.alloc_global (at the
    prim_func's top level), T.alloc_shared, T.alloc_fragment or T.alloc_local."""
    from .global_scratch import call_alloc_global

    why = "tlc allocates the buffer itself (a buffer over other data is a view: T.view)"
    a = _args(gen, node, memory.alloc_buffer, unsupported={
        k: why for k in ("data", "strides", "elem_offset", "align", "offset_factor",
                         "buffer_type", "axis_separators", "annotations")})
    scope = gen.eval_static(a["scope"])
    place = _BUFFER_SCOPES.get(scope) if isinstance(scope, str) else None
    if place is None:
        raise gen.error(a["scope"], f"T.alloc_buffer's scope is one of "
                                    f"{', '.join(map(repr, _BUFFER_SCOPES))}, got {scope!r}")
    call = ast.copy_location(ast.Call(func=node.func, args=[a["shape"], a["dtype"]],
                                      keywords=[ast.keyword(arg="scope", value=a["scope"])]),
                             node)
    if place == "global":
        return call_alloc_global(gen, call, name_node=node)
    return _alloc(gen, call, place, name_node=node)


def _int_bound(gen, x):
    """An integer scalar as an index: its value's leaf plus the constants
    added to it (`off + 8` is leaf(off) + 8), else `x` itself."""
    if not isinstance(x, Scalar) or not x.dtype.startswith(("int", "uint")):
        return x
    value, offset = x.value, 0
    while isinstance(value, ir.OpResult) and value.owner.name in ("arith.addi", "arith.subi"):
        lhs, rhs = value.owner.operands
        const = rhs.owner if isinstance(rhs, ir.OpResult) else None
        if const is None or const.name != "arith.constant":
            break
        c = ir.IntegerAttr(const.attributes["value"]).value
        offset += c if value.owner.name == "arith.addi" else -c
        value = lhs
    return gen.index_leaf(Scalar(value, x.dtype)) + offset


def _region(gen, node):
    """(buffer, offsets or None, sizes or None) of a T.copy operand: a whole
    buffer `A`, a tile origin `A[i, j]`, or slices `A[b, i:j, :]` (a buffer
    picked from a compile-time list, `ring[s]`, is a whole buffer)."""
    base = gen.eval(node.value) if isinstance(node, ast.Subscript) and not variables.named(
        gen, node.value) else None
    if isinstance(base, ColumnPieces):  # `Q_s[:, :D]` of a buffer split by its slices
        return piece_of(gen, node, base), None, None
    if not isinstance(node, ast.Subscript) or isinstance(base, (list, tuple)):
        return _buffer(gen, node, "a T.copy operand"), None, None
    stage = stage_of(gen, node)  # `A_s[k % 2, :, :]`: one stage, a whole buffer
    if stage is not None:
        return stage, None, None
    buf = _buffer(gen, node.value, "a T.copy operand")
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if len(items) != buf.rank:
        raise gen.error(node, f"'{buf.name}' has {buf.rank} dimension(s) but the region names "
                              f"{len(items)}")
    offsets, sizes, sliced = [], [], False
    for dim, item in enumerate(items):
        v = gen.eval(item)
        if not isinstance(v, slice):
            gen.check_index(v, item, "an index")
            offsets.append(v)
            sizes.append(None)
            continue
        sliced = True
        if v.step not in (None, 1):
            raise gen.error(item, "strided slices are not supported in T.copy")
        lo = 0 if v.start is None else v.start
        hi = buf.shape[dim] if v.stop is None else v.stop
        # An integer read at run time (a T.alloc_var: `X[off:off + 8]`) is one
        # index leaf in both bounds, so their difference is known.
        lo, hi = _int_bound(gen, lo), _int_bound(gen, hi)
        for bound in (lo, hi):
            gen.check_index(bound, item, "a slice bound")
        extent = simplify(as_affine(hi) - lo) if _indexish(hi) and _indexish(lo) else None
        if not isinstance(extent, int):
            raise gen.error(item, f"the extent of this slice of '{buf.name}' must be a "
                                  "compile-time constant (like i*64:(i+1)*64)")
        if extent <= 0:
            raise gen.error(item, f"empty slice (extent {extent}) of '{buf.name}'")
        offsets.append(lo)
        sizes.append(extent)
    if not sliced:
        return buf, offsets, None
    return buf, offsets, [1 if s is None else s for s in sizes]


def _indexish(x) -> bool:
    return isinstance(x, (int, Affine)) and not isinstance(x, bool)


def _block_work(gen, node, what: str) -> None:
    """An op of the whole block: inside a kernel, outside T.Parallel."""
    gen.require_kernel(node, what)
    if gen.parallel_depth:
        raise gen.error(node, f"{what} cannot be inside T.Parallel")


def call_copy(gen, node):
    _block_work(gen, node, "T.copy")
    a = _args(gen, node, memory.copy, _COPY_UNSUPPORTED)
    # disable_tma=True is recorded on the op: tile-pipeline-loops then keeps
    # the copy (and its loop) off TMA and warp specialization.
    disable_tma = static_bool(gen, a["disable_tma"], "disable_tma")
    for op in build_copies(gen, node, a["src"], a["dst"]):
        if disable_tma and op is not None and op.name == "tile.copy":  # (T.Layout: elements)
            op.attributes["tile.disable_tma"] = ir.UnitAttr.get()


def build_copy(gen, node, src_node, dst_node):
    """The tile.copy of T.copy's regions `src_node` to `dst_node` (errors at
    `node`; the last one where a buffer split by its column slices takes one
    copy per slice)."""
    return build_copies(gen, node, src_node, dst_node)[-1]


def mark_copies(gen, node, src_node, dst_node, attr: str, refusal: str,
                extra: dict | None = None) -> None:
    """T.copy's tile.copy ops of `src_node` to `dst_node`, each marked `attr`
    (T.tma_copy, T.atomic_add(..., use_tma=True)) and the attributes of
    `extra`; `refusal` at `node` where they are element copies (a tensor with
    a T.Layout, one element)."""
    with gen.loc(node):
        ops = build_copies(gen, node, src_node, dst_node)
    for op in ops:  # one per column slice of a buffer split by them
        if op is None or op.name != "tile.copy":
            raise gen.error(node, refusal)
        op.attributes[attr] = ir.UnitAttr.get()
        for name, value in (extra or {}).items():
            op.attributes[name] = value


def build_copies(gen, node, src_node, dst_node) -> list:
    """The ops of T.copy's regions `src_node` to `dst_node`: one tile.copy, or
    one per slice of a buffer split by its column slices (column_split)."""
    for side, other, to_pieces in ((dst_node, src_node, True), (src_node, dst_node, False)):
        if isinstance(side, ast.Name) and isinstance(pieces := gen.eval(side), ColumnPieces):
            return _copy_pieces(gen, node, pieces, other, to_pieces)
    src, src_off, src_sizes = _region(gen, src_node)
    dst, dst_off, dst_sizes = _region(gen, dst_node)
    return [_copy_regions(gen, node, src, src_off, src_sizes, dst, dst_off, dst_sizes)]


def _copy_pieces(gen, node, pieces: ColumnPieces, other_node, to_pieces: bool):
    """T.copy of a whole buffer allocated by its column slices (column_split)
    to or from `other_node`'s region: one copy per slice, of the region's
    columns it holds (the region's last dimension must be the columns)."""
    buf, off, sizes = _region(gen, other_node)
    if off is None:
        if buf.static_shape() is None:
            raise gen.error(node, f"'{buf.name}' has dynamic sizes: give the region with an "
                                  "origin or slices")
        off, sizes = [0] * buf.rank, list(buf.shape)
    if sizes is None:  # a tile origin: the extent is the split buffer's, trailing-aligned
        sizes = [1] * (buf.rank - 2) + list(pieces.shape)
    if sizes[-1] != pieces.shape[1] or \
            [d for d in sizes if d != 1] != [d for d in pieces.shape if d != 1]:
        raise gen.error(node, f"T.copy shapes differ: the region is "
                              f"{'x'.join(map(str, sizes))}, {pieces!r} is "
                              f"{'x'.join(map(str, pieces.shape))}")
    ops = []
    for (lo, hi), piece in sorted(pieces.pieces.items()):
        last = off[-1]
        if not isinstance(last, (int, Affine)):  # an integer read at run time
            last = Affine.leaf(gen.index(last, node, "a T.copy offset"))
        part_off = list(off[:-1]) + [last + lo if isinstance(last, int)
                                     else simplify(as_affine(last) + lo)]
        part_sizes = list(sizes[:-1]) + [hi - lo]
        whole = [0, 0], list(piece.shape)
        if to_pieces:
            ops.append(_copy_regions(gen, node, buf, part_off, part_sizes, piece, *whole))
        else:
            ops.append(_copy_regions(gen, node, piece, *whole, buf, part_off, part_sizes))
    return ops


def _copy_regions(gen, node, src, src_off, src_sizes, dst, dst_off, dst_sizes):
    def whole(buf):
        if buf.static_shape() is None:
            raise gen.error(node, f"'{buf.name}' has dynamic sizes: give the region with an "
                                  "origin or slices")
        return [0] * buf.rank, list(buf.shape)

    if src_off is None:
        src_off, src_sizes = whole(src)
    if dst_off is None:
        dst_off, dst_sizes = whole(dst)
    # A tile origin (indices, no slices) takes its extent from the other side,
    # aligned at the trailing dimensions.
    if src_sizes is None and dst_sizes is None:
        # Two elements (`T.copy(A[i], B[i])`): TileLang's one-element store.
        if len(src_off) != src.rank or len(dst_off) != dst.rank:
            raise gen.error(node, "T.copy needs the extent of one side: a whole buffer or "
                                  "slices")
        gen.store_element(dst, dst_off, gen.load_element(src, [
            Affine.leaf(gen.index(o, node, "a T.copy index")) if not isinstance(
                o, (int, Affine)) else o for o in src_off]), node)
        return None
    if src_sizes is None:
        src_sizes = _extent_from(gen, node, src, dst_sizes)
    if dst_sizes is None:
        dst_sizes = _extent_from(gen, node, dst, src_sizes)
    squeeze = lambda s: [d for d in s if d != 1]  # noqa: E731
    if squeeze(src_sizes) != squeeze(dst_sizes):
        raise gen.error(node, f"T.copy shapes differ: source region "
                              f"{'x'.join(map(str, src_sizes))} vs destination region "
                              f"{'x'.join(map(str, dst_sizes))}")
    src_idx = [gen.index(o, node, "a T.copy offset") for o in src_off]
    dst_idx = [gen.index(o, node, "a T.copy offset") for o in dst_off]
    def whole_buffer(buf, offsets, sizes) -> bool:
        return list(sizes) == list(buf.shape) and all(
            isinstance(o, int) and not isinstance(o, bool) and o == 0 for o in offsets)

    # Element loops: a side a T.Layout places, or a part of a fragment copied to or from
    # another fragment (T.copy(lse[k, :], row), as TileLang's flash decoding takes one row of
    # its log-sum-exps a pipeline step): the loop reads lse[k, i], placed by layout inference.
    partial_fragments = src.place == dst.place == "fragment" and not (
        whole_buffer(src, src_off, src_sizes) and whole_buffer(dst, dst_off, dst_sizes))
    if src in gen.index_maps or dst in gen.index_maps or partial_fragments:
        return _element_copy(gen, node, src, region_bases(src_off, src_idx), src_sizes, dst,
                             region_bases(dst_off, dst_idx), dst_sizes)
    for buf in (src, dst):
        if buf.place == "global":
            gen.accessed.add(buf)
    return tile.copy(src.value, src_idx, src_sizes, dst.value, dst_idx, dst_sizes)


def region_bases(offsets, values) -> list:
    """A region's start per dimension for region_elements: a constant or
    Affine offset as it is (0 plus a loop index is that index: how a loop
    reads a whole fragment), else its index value (`values`, built by
    gen.index) as a leaf."""
    return [o if isinstance(o, (int, Affine)) and not isinstance(o, bool) else Affine.leaf(v)
            for o, v in zip(offsets, values)]


def region_elements(ivs, bases, sizes) -> list:
    """The indices of a region's element in a loop over its (squeezed) shape:
    base + the loop index of each dimension of more than one element."""
    ivs, out = list(ivs), []
    for base, size in zip(bases, sizes):
        out.append(as_affine(base) + Affine.leaf(ivs.pop(0)) if size != 1 and ivs else base)
    return out


def _element_copy(gen, node, src, src_idx, src_sizes, dst, dst_idx, dst_sizes):
    """T.copy as a parallel loop over the region, each element read and written at its
    place: for a side whose elements a T.Layout places, and for part of a fragment copied
    to or from another fragment."""
    shape = [d for d in src_sizes if d != 1] or [1]
    loop = tile.ParallelOp(shape)
    body = loop.body.blocks.append(*([ir.IndexType.get()] * len(shape)))
    with ir.InsertionPoint(body), gen.loc(node):
        at_src = region_elements(body.arguments, src_idx, src_sizes)
        at_dst = region_elements(body.arguments, dst_idx, dst_sizes)
        if src.place == "global":
            at_src = placed_indices(gen, src, at_src, node)
        if dst.place == "global":
            at_dst = placed_indices(gen, dst, at_dst, node)
        gen.store_element(dst, at_dst, gen.load_element(src, at_src), node)
    return loop


def _extent_from(gen, node, buf, other_sizes) -> list[int]:
    tile_shape = [d for d in other_sizes if d != 1] or [1]
    if len(tile_shape) > buf.rank:
        raise gen.error(node, f"a {len(tile_shape)}-d tile does not fit in '{buf.name}', which "
                              f"has {buf.rank} dimension(s)")
    return [1] * (buf.rank - len(tile_shape)) + tile_shape


def _printf_arg(gen, value, dt: str, node):
    """(printf conversion, value) for a scalar of dtype `dt`: floats as double
    (%f, widened), integers as 64-bit (%lld)."""
    if dtypes.is_float(dt):
        return "%f", gen.to_value(value, "float64", node)
    return "%lld", gen.to_value(value, "int64", node)


def _values(xs) -> list:
    """MLIR values of op results or values."""
    return [x.result if isinstance(x, ir.OpView) else x for x in xs]


def _printf_text(msg: str) -> str:
    return msg.replace("%", "%%")


def _condition(gen, node, what: str):
    """A boolean for T.device_assert / T.assume: a compile-time bool, or an i1 value."""
    cond = gen.eval(node)
    if isinstance(cond, (bool, int)) and not isinstance(cond, float):
        return bool(cond)
    if not isinstance(cond, (Scalar, Affine)):
        raise gen.error(node, f"{what} takes a boolean condition, got {gen.describe(cond)}")
    return gen.to_value(cond, "bool", node)


def call_device_assert(gen, node):
    """T.device_assert(condition, msg): where it is false, printf and trap."""
    from ..dialects import gpu, llvm, scf

    gen.require_kernel(node, "T.device_assert")
    a = _args(gen, node, debug.device_assert)
    msg = gen.eval_static(a["msg"])
    if not isinstance(msg, str):
        raise gen.error(a["msg"], f"T.device_assert's msg must be a compile-time string, "
                                  f"got {msg!r}")
    quiet = static_bool(gen, a["no_stack_info"], "no_stack_info")
    cond = _condition(gen, a["condition"], "T.device_assert")
    if cond is True:
        return
    where = "" if quiet else f"{gen.filename}:{getattr(node, 'lineno', 0)}: "
    text = _printf_text(f"{where}device assertion failed" + (f": {msg}" if msg else "")) + "\n"

    def fail():
        gpu.PrintfOp(format=text, args=[])
        llvm.intr_trap()

    if cond is False:
        fail()
        return
    true = arith.constant(ir.IntegerType.get_signless(1), 1)
    guard = scf.IfOp(arith.xori(cond, true))
    with ir.InsertionPoint(guard.then_block):
        fail()
        scf.YieldOp([])


def call_assume(gen, node):
    """T.assume(cond): llvm.intr.assume (a compile-time True: nothing)."""
    from ..dialects import llvm

    gen.require_kernel(node, "T.assume")
    a = _args(gen, node, debug.assume)
    cond = _condition(gen, a["cond"], "T.assume")
    if cond is True:
        return
    if cond is False:
        raise gen.error(a["cond"], "T.assume of a condition that is always false")
    llvm.intr_assume(cond, [], [])


def call_print(gen, node):
    """T.print(obj, msg=""): gpu.printf of a scalar, or of each element of an
    on-chip buffer (a T.Parallel over it)."""
    gen.require_kernel(node, "T.print")
    a = _args(gen, node, debug.print)
    msg = gen.eval_static(a["msg"]) if a["msg"] is not None else ""
    if not isinstance(msg, str):
        raise gen.error(a["msg"], f"T.print's msg must be a compile-time string, got {msg!r}")
    from ..dialects import gpu, memref

    obj = gen.eval(a["obj"])
    prefix = _printf_text(msg) + (": " if msg else "")
    if isinstance(obj, BufferRef):
        if obj.place == "global":
            raise gen.error(a["obj"], f"T.print prints scalars and on-chip buffers; '{obj.name}' "
                                      "is a global tensor: copy the tile of interest into a "
                                      "buffer and print that")
        shape = list(obj.shape)
        op = tile.ParallelOp(shape)
        block = op.body.blocks.append(*([ir.IndexType.get()] * len(shape)))
        with ir.InsertionPoint(block):
            element = memref.load(obj.value, list(block.arguments))
            conv, value = _printf_arg(gen, Scalar(element, obj.dtype), obj.dtype, node)
            indices = [gen.to_value(Affine.leaf(i), "int64", node) for i in block.arguments]
            where = ", ".join(["%lld"] * len(shape))
            gpu.PrintfOp(format=f"{prefix}{obj.name}[{where}] = {conv}\n",
                         args=_values(indices + [value]))
        return
    if isinstance(obj, Scalar):
        dt = obj.dtype if obj.dtype != "index" else "int64"
    elif isinstance(obj, Affine):
        dt = "int64"
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        dt = "float64" if isinstance(obj, float) else "int64"
    else:
        raise gen.error(a["obj"], f"T.print prints a scalar or an on-chip buffer, got "
                                  f"{gen.describe(obj)}")
    conv, value = _printf_arg(gen, obj, dt, node)
    blocks = [gen.to_value(Affine.leaf(b), "int64", node)
              for b in gen.kernel.body.blocks[0].arguments]
    where = ", ".join(["%lld"] * len(blocks))
    gpu.PrintfOp(format=f"block ({where}): {prefix}{conv}\n", args=_values(blocks + [value]))


def call_fill(gen, node):
    gen.require_kernel(node, "T.fill")
    a = _args(gen, node, memory.fill, _ANNOTATIONS)
    value = gen.eval(a["value"])
    if (var := variables.named(gen, a["buffer"])) is not None:  # T.fill(x, v) of a T.alloc_var
        variables.assign(gen, var, value, node)
        return
    if _fill_region(gen, node, a["buffer"], value, "T.fill"):
        return
    buf = _buffer(gen, a["buffer"], "T.fill's first argument", reducer_ok=True)
    _fill(gen, node, buf, value)


_MOST_LOGICAL_ELEMENTS = 256


def _logical_of(gen, node, name: str):
    """T.any_of / T.all_of: every thread reads the region's elements and ORs
    (ANDs) their truth."""
    from ..language import scalar_math

    a = _args(gen, node, getattr(scalar_math, name))
    buf, offsets, sizes = _region(gen, a["buffer"])
    if buf.place == "fragment":
        raise gen.error(a["buffer"], f"T.{name} of the fragment '{buf.name}': its elements are "
                                     "spread over the threads; copy it to shared memory")
    if offsets is None:
        if buf.static_shape() is None:
            raise gen.error(a["buffer"], f"T.{name} of '{buf.name}', whose sizes are known at "
                                         "run time: give a region of static extent")
        offsets, sizes = [0] * buf.rank, list(buf.shape)
    sizes = sizes or [1] * len(offsets)
    count = math.prod(sizes)
    if count > _MOST_LOGICAL_ELEMENTS:
        raise gen.error(a["buffer"], f"T.{name} of {count} elements: every thread reads them "
                                     f"all, so at most {_MOST_LOGICAL_ELEMENTS}")
    import itertools

    result = None
    combine = arith.ori if name == "any_of" else arith.andi
    for at in itertools.product(*(range(n) for n in sizes)):
        element = gen.load_element(buf, [simplify(as_affine(o) + i) for o, i in zip(offsets, at)])
        truth = gen.to_value(element, "bool", node)
        result = truth if result is None else combine(result, truth)
    return Scalar(result, "bool")


def call_any_of(gen, node):
    gen.require_kernel(node, "T.any_of")
    return _logical_of(gen, node, "any_of")


def call_all_of(gen, node):
    gen.require_kernel(node, "T.all_of")
    return _logical_of(gen, node, "all_of")


def call_transpose(gen, node):
    """T.transpose(src, dst): a T.Parallel loop over src storing dst[j, i]."""
    _block_work(gen, node, "T.transpose")
    a = _args(gen, node, memory.transpose, _ANNOTATIONS)
    src = _buffer(gen, a["src"], "T.transpose's source")
    dst = _buffer(gen, a["dst"], "T.transpose's destination")
    for buf, n in ((src, a["src"]), (dst, a["dst"])):
        if buf.place != "shared" or buf.rank != 2:
            raise gen.error(n, f"T.transpose takes 2-d shared buffers, got the {buf.place} "
                               f"buffer '{buf.name}' of shape {list(buf.shape)}")
    if list(dst.shape) != list(reversed(src.shape)):
        raise gen.error(node, f"T.transpose of a {src.shape[0]}x{src.shape[1]} buffer needs a "
                              f"{src.shape[1]}x{src.shape[0]} destination, got "
                              f"{dst.shape[0]}x{dst.shape[1]}")
    if src.dtype != dst.dtype:
        raise gen.error(node, f"T.transpose keeps the dtype: {src.dtype} to {dst.dtype}")
    index = ir.IndexType.get()
    op = tile.ParallelOp(list(src.shape))
    block = op.body.blocks.append(index, index)
    with ir.InsertionPoint(block):
        i, j = (Affine.leaf(v) for v in block.arguments)
        gen.store_element(dst, [j, i], gen.load_element(src, [i, j]), node)


def call_clear(gen, node):
    gen.require_kernel(node, "T.clear")
    a = _args(gen, node, memory.clear, _ANNOTATIONS)
    if (var := variables.named(gen, a["buffer"])) is not None:  # TileLang's T.clear(x) of a var
        variables.assign(gen, var, 0, node)
        return
    if _fill_region(gen, node, a["buffer"], 0, "T.clear"):
        return
    _fill(gen, node, _buffer(gen, a["buffer"], "T.clear's argument", reducer_ok=True), 0)


def _fill_region(gen, node, target, value, what: str) -> bool:
    """`T.fill(s[0], v)` / `T.fill(s[i, 0:16], v)`: part of a shared or local
    buffer or a global tensor (TileLang's region fill). A shared or global
    region is the block's work, a T.Parallel loop over it; a local one each
    thread's own stores. Whole on-chip buffers (and fragments) are
    tile.fill's."""
    if not isinstance(target, ast.Subscript) or stage_of(gen, target) is not None:
        return False
    buf, offsets, sizes = _region(gen, target)
    if offsets is None:
        return False
    if buf.place not in ("shared", "local", "global") or buf.reducer is not None:
        raise gen.error(target, f"{what} of part of the {buf.place} buffer '{buf.name}': only "
                                "shared and local buffers and global tensors are filled by "
                                "region (a fragment whole)")
    sizes = sizes or [1] * len(offsets)
    _fill_parallel(gen, buf, offsets, sizes, value, target)
    return True


def _fill_parallel(gen, buf, offsets, sizes, value, node) -> None:
    """Fills the region of a shared, local or global buffer: a local one by each
    thread's own stores, the others by a T.Parallel loop over it (the block's
    work, global elements outside the tensor skipped)."""
    index = ir.IndexType.get()
    if buf.place == "local":
        import itertools

        for at in itertools.product(*(range(n) for n in sizes)):
            gen.store_element(buf, [simplify(as_affine(o) + i) for o, i in zip(offsets, at)],
                              value, node)
        return
    op = tile.ParallelOp(list(sizes))
    block = op.body.blocks.append(*([index] * len(sizes)))
    with ir.InsertionPoint(block):
        ivs = [Affine.leaf(a) for a in block.arguments]
        gen.store_element(buf, [simplify(as_affine(o) + i) for o, i in zip(offsets, ivs)],
                          value, node)


def _fill(gen, node, buf, value):
    if buf.reducer is not None:
        reducers.fill(gen, node, buf, value)
        return
    if buf.place == "global":  # a T.Parallel loop over the whole tensor
        if buf.static_shape() is None:
            raise gen.error(node, f"T.fill of the global tensor '{buf.name}', whose sizes are "
                                  "known at run time: fill a region of static extent "
                                  "(T.fill(A[i:i + 128], v))")
        _fill_parallel(gen, buf, [0] * buf.rank, list(buf.shape), value, node)
        return
    tile.fill(buf.value, gen.to_value(value, buf.dtype, node))


_POLICIES = {GemmWarpPolicy.Square: "square", GemmWarpPolicy.FullRow: "full_row",
             GemmWarpPolicy.FullCol: "full_col"}


def call_gemm(gen, node):
    _gemm(gen, node, tile_ops.gemm, "T.gemm")


def call_wgmma_gemm(gen, node):
    """T.wgmma_gemm: T.gemm on wgmma only, issued without a wait (as wg_wait=-1:
    a later T.wait_wgmma completes it)."""
    op = _gemm(gen, node, tile_ops.wgmma_gemm, "T.wgmma_gemm")
    op.attributes["wg_wait"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), -1)
    op.attributes["tile.require_wgmma"] = ir.UnitAttr.get()


def _gemm(gen, node, fn, what: str):
    gen.require_kernel(node, what)
    a = _args(gen, node, fn, _GEMM_UNSUPPORTED)
    operands = []
    for name in ("A", "B", "C"):
        staged = stage_of(gen, a[name]) if name != "C" else None
        if staged is None:
            check_whole_operand(gen, a[name], f"{what}'s {name}")
        operands.append(staged or _buffer(gen, a[name], f"{what}'s {name}"))
    A, B, C = operands
    flag = lambda k: bool(gen.eval_static(a[k]))  # noqa: E731
    policy = gen.eval_static(a["policy"])
    if policy not in _POLICIES:
        raise gen.error(a["policy"], f"policy must be a T.GemmWarpPolicy, got {policy!r}")
    transpose_a, transpose_b = flag("transpose_A"), flag("transpose_B")
    # fp8 tensor cores (wgmma) read both operands K-major: an M-major A or an
    # N-major B is first transposed into a buffer of its own.
    if transpose_a and dtypes.is_fp8(A.dtype) and A.place == "shared":
        A, transpose_a = k_major_copy(gen, A), False
    if not transpose_b and dtypes.is_fp8(B.dtype) and B.place == "shared":
        B, transpose_b = k_major_copy(gen, B), True
    op = tile.GemmOp(A.value, B.value, C.value, [])
    if transpose_a:
        op.attributes["transpose_a"] = ir.UnitAttr.get()
    if transpose_b:
        op.attributes["transpose_b"] = ir.UnitAttr.get()
    if flag("clear_accum"):
        op.attributes["clear_accum"] = ir.UnitAttr.get()
    op.attributes["policy"] = ir.Attribute.parse(f"#tile.warp_policy<{_POLICIES[policy]}>")
    if "k_pack" in a and gen.eval_int(a["k_pack"], "k_pack") != 1:
        raise gen.error(a["k_pack"], "k_pack packs K for AMD's MFMA instructions; on NVIDIA "
                                     "GPUs it must be 1")
    if "wg_wait" in a.given:  # the op's default is "wait for all", as wg_wait=0
        wait = gen.eval_int(a["wg_wait"], "wg_wait")
        if wait < -1:
            raise gen.error(a["wg_wait"], f"wg_wait must be -1 (wait for none: a later "
                                          f"T.wait_wgmma completes the gemm) or more, got {wait}")
        op.attributes["wg_wait"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), wait)
    return op


def k_major_copy(gen, buf: BufferRef) -> BufferRef:
    """A shared buffer holding 2-d shared buffer `buf` (of bytes) transposed,
    filled here (the compiler's barriers order it after `buf`'s writes and
    before the gemm): by a tile.transpose where its shape allows (rows a
    multiple of 128, columns whole 128-byte blocks and one of 64 or 32 at
    most), else by a serial loop over chunks of its rows, each a T.Parallel
    loop in which every thread writes one 16-byte run of K-elements
    (gathered byte by byte, so slower), few values live at once beside a
    gemm's accumulators."""
    rows, cols = buf.shape
    space = ir.Attribute.parse("#gpu.address_space<workgroup>")
    elem = ir.MemRefType(buf.value.type).element_type
    name = f"{buf.name or 'operand'}_k_major"
    loc = ir.Location.name(name, childLoc=ir.Location.current)
    block = ir.InsertionPoint.current.block
    loop = block.owner if block.owner.operation.name == "tile.pipelined" else None
    whole = rows % 128 == 0 and cols % 32 == 0 and cols % 128 in (0, 32, 64)  # tile.transpose
    if whole and loop is not None:
        # Directly in a T.Pipelined loop: two copies, iteration i writing copy
        # i % 2 while the wgmma of iteration i - 1 may still read the other
        # (tile-select-mma leaves one group pending for it).
        with ir.InsertionPoint(loop):
            both = tile.alloc_shared(
                ir.MemRefType.get([2, cols, rows], elem, memory_space=space),
                layout=ir.Attribute.parse("#tile.shared<stages = 2>"), loc=loc)
        start, _, step = loop.operands
        index = ir.IndexType.get()
        i = arith.divui(arith.subi(block.arguments[0], start), step)
        which = arith.remui(i, arith.constant(index, 2))
        t = tile.stage(ir.MemRefType.get([cols, rows], elem, memory_space=space), both, which)
        tile.transpose(buf.value, t)
        return BufferRef(name, t, [cols, rows], buf.dtype, "shared")
    t = tile.alloc_shared(ir.MemRefType.get([cols, rows], elem, memory_space=space), loc=loc)
    if whole:  # 4 x 4 byte blocks
        tile.transpose(buf.value, t)
        return BufferRef(name, t, [cols, rows], buf.dtype, "shared")
    threads = math.prod(gen.thread_dims) if gen.thread_dims else 128
    chunk = max(1, min(cols, threads * 16 // rows))
    while cols % chunk:
        chunk -= 1
    index = ir.IndexType.get()
    c0, c1, steps = (arith.constant(index, v) for v in (0, 1, cols // chunk))
    outer = scf.ForOp(c0, steps, c1)
    with ir.InsertionPoint(outer.body):
        base = arith.muli(outer.induction_variable, arith.constant(index, chunk))
        loop = tile.ParallelOp([chunk, rows])
        body = loop.body.blocks.append(index, index)
        with ir.InsertionPoint(body):
            i, j = body.arguments
            r = arith.addi(base, i)
            memref.store(memref.load(buf.value, [j, r]), t, [r, j])
        scf.YieldOp([])
    return BufferRef(name, t, [cols, rows], buf.dtype, "shared")


def call_wait_wgmma(gen, node):
    gen.require_kernel(node, "T.wait_wgmma")
    a = _args(gen, node, tile_ops.wait_wgmma)
    pending = gen.eval_int(a["id"], "id")
    if pending < 0:
        raise gen.error(a["id"], f"T.wait_wgmma's id (the wgmma groups left running) must be "
                                 f"non-negative, got {pending}")
    tile.WaitWgmmaOp([], ir.IntegerAttr.get(ir.IntegerType.get_signless(64), pending))


_REDUCE_UNSUPPORTED = {"annotations": "TileLang's lowering annotations"}
# A tile.reduce of max / min / absmax whose NaNs propagate (T.reduce_*'s
# nan_propagate=True); without it NaNs are skipped, TileLang's default.
NAN_PROPAGATE_ATTR = "tile.nan_propagate"


def _reduce(gen, node, kind: str):
    gen.require_kernel(node, f"T.reduce_{kind}")
    a = _args(gen, node, getattr(tile_ops, f"reduce_{kind}"), _REDUCE_UNSUPPORTED)
    batch_of_one(gen, a, f"T.reduce_{kind}")
    propagate = False
    if "nan_propagate" in a.given:
        propagate = gen.eval_static(a["nan_propagate"])
        if not isinstance(propagate, bool):
            raise gen.error(a["nan_propagate"], f"T.reduce_{kind}: nan_propagate must be True "
                                                f"or False, got {propagate!r}")
    src = _buffer(gen, a["buffer"], f"T.reduce_{kind}'s source")
    dst = _buffer(gen, a["out"], f"T.reduce_{kind}'s destination")
    dim = gen.eval_int(a["dim"], "dim")
    if not -src.rank <= dim < src.rank:
        raise gen.error(a["dim"], f"dim {dim} is out of range for the "
                                            f"{src.rank}-d '{src.name}'")
    dim %= src.rank
    clear = bool(gen.eval_static(a["clear"]))
    if src.dtype != dst.dtype and src.place == "fragment" and dst.place == "fragment" and \
            src.reducer is None and dst.reducer is None:
        # float16 values reduced into float32 (TileLang's flash decoding): a
        # converted copy of the source, reduced in the destination's type.
        space = ir.Attribute.parse("#tile.space<fragment>")
        t = ir.MemRefType.get(list(src.shape), dtypes.storage_type(dst.dtype),
                              memory_space=space)
        converted = BufferRef(src.name, tile.alloc_fragment(t), list(src.shape), dst.dtype,
                              "fragment")
        c0 = [arith.constant(ir.IndexType.get(), 0)] * src.rank
        tile.copy(src.value, c0, list(src.shape), converted.value, c0, list(src.shape))
        src = converted
    i64 = ir.IntegerType.get_signless(64)
    op = tile.ReduceOp(src.value, dst.value,
                       ir.Attribute.parse(f"#tile.reduce_kind<{kind}>"), ir.IntegerAttr.get(i64, dim))
    if clear:
        op.attributes["clear"] = ir.UnitAttr.get()
    if propagate:
        op.attributes[NAN_PROPAGATE_ATTR] = ir.UnitAttr.get()


def call_reduce_max(gen, node):
    _reduce(gen, node, "max")


def call_reduce_sum(gen, node):
    _reduce(gen, node, "sum")


def call_reduce_min(gen, node):
    _reduce(gen, node, "min")


def call_reduce_abssum(gen, node):
    _reduce(gen, node, "abssum")


def call_reduce_absmax(gen, node):
    _reduce(gen, node, "absmax")


def call_use_swizzle(gen, node):
    gen.require_kernel(node, "T.use_swizzle")
    a = _args(gen, node, loops.use_swizzle)
    panel = gen.eval_int(a["panel_size"], "panel_size")
    order = gen.eval_static(a["order"])
    if order not in ("row", "col", "column"):
        raise gen.error(a["order"], f"order must be \"row\" or \"col\", got {order!r}")
    if panel < 1:
        raise gen.error(a["panel_size"], f"panel_size must be positive, got {panel}")
    if not gen.eval_static(a["enable"]):
        return
    gen.kernel.operation.attributes["tile.rasterization"] = ir.DictAttr.get({
        "panel_size": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), panel),
        "order": ir.StringAttr.get("col" if order == "column" else order),
    })


def call_annotate_layout(gen, node):
    from ..layout import Fragment, RowMajorLayout, SwizzledLayout
    from ..layout.index_map import Layout

    gen.require_kernel(node, "T.annotate_layout")
    a = _args(gen, node, loops.annotate_layout)
    mapping = gen.eval(a["layout_map"])
    if not isinstance(mapping, dict):
        raise gen.error(a["layout_map"], "T.annotate_layout takes {buffer: layout}")
    # Errors point at the layout's own expression when the dict is written out.
    literal = a["layout_map"]
    written = (isinstance(literal, ast.Dict) and None not in literal.keys
               and len(literal.values) == len(mapping))
    nodes = list(literal.values) if written else [literal] * len(mapping)
    for (buf, layout), where in zip(mapping.items(), nodes):
        if not isinstance(buf, BufferRef):
            raise gen.error(where, f"layout keys must be buffers, got {buf!r}")
        if isinstance(layout, (SwizzledLayout, RowMajorLayout)):
            what = "swizzled" if isinstance(layout, SwizzledLayout) else "row-major"
            if layout.buffer is not None and layout.buffer is not buf:
                raise gen.error(where, f"the layout made for '{layout.buffer.name}' "
                                       f"annotates '{buf.name}'")
            if buf.place != "shared":
                raise gen.error(where, f"a {what} layout applies to shared buffers; "
                                       f"'{buf.name}' is {buf.place}")
        if isinstance(layout, SwizzledLayout):
            if buf.value.owner.name == "tile.view" or viewed(buf):
                raise gen.error(where, f"'{buf.name}' is viewed with T.reshape / T.view (or "
                                       "is such a view); a viewed buffer takes the compiler's "
                                       "layout, it cannot take a swizzled layout of the "
                                       "program's")
            buf.value.owner.attributes["layout"] = ir.Attribute.parse(
                f"#tile.shared<swizzle = {layout.attr()}>")
        elif isinstance(layout, RowMajorLayout):
            # Pinned row-major: no swizzle (a gemm reading it is an error, tile-select-mma).
            buf.value.owner.attributes["tile.row_major"] = ir.UnitAttr.get()
        elif isinstance(layout, Fragment):
            _annotate_fragment(gen, where, buf, layout)
        elif isinstance(layout, Layout):
            _annotate_global(gen, where, buf, layout)
        else:
            raise gen.error(where, f"unsupported layout {layout!r} for '{buf.name}' "
                                   "(tlc supports tlc.layout.make_swizzled_layout for shared "
                                   "buffers, T.Fragment for fragments and T.Layout for "
                                   "global tensors)")


def _annotate_global(gen, where, buf: BufferRef, layout) -> None:
    """A T.Layout on a global tensor: this kernel's accesses to it go to each
    element's physical place (tlc.layout.index_map)."""
    if buf.place != "global":
        raise gen.error(where, f"a T.Layout places the elements of a global tensor; "
                               f"'{buf.name}' is {buf.place} (shared buffers take "
                               "make_swizzled_layout, fragments T.Fragment)")
    if buf.static_shape() is None or tuple(buf.shape) != layout.shape:
        raise gen.error(where, f"the layout is for shape {list(layout.shape)}, but "
                               f"'{buf.name}' has shape {[str(d) for d in buf.shape]}")
    if buf in gen.accessed:
        raise gen.error(where, f"'{buf.name}' is accessed before this T.annotate_layout in "
                               "the kernel: annotate its layout before its first access")
    if buf in gen.index_maps:
        raise gen.error(where, f"'{buf.name}' already has a T.Layout in this kernel")
    gen.index_maps[buf] = layout


def placed_indices(gen, buf: BufferRef, indices, node):
    """`indices` of `buf` remapped by its T.Layout, if the kernel gave it one;
    records the access (for annotate_layout's check)."""
    gen.accessed.add(buf)
    layout = gen.index_maps.get(buf)
    if layout is None:
        return list(indices)
    with gen.loc(node):
        return layout.placed(list(indices), lambda op, a, b: gen.binop(op(), a, b, node))


def _annotate_fragment(gen, where, buf: BufferRef, layout) -> None:
    """Puts the #tile.layout of a T.Fragment on the fragment's allocation."""
    from ..layout import LayoutError

    if buf.place != "fragment":
        raise gen.error(where, f"a T.Fragment layout applies to fragments (T.alloc_fragment); "
                               f"'{buf.name}' is {buf.place}")
    if buf.value.owner.name == "tile.view":
        raise gen.error(where, f"'{buf.name}' is a view (T.reshape / T.view) of a fragment, "
                               "whose layout is its allocation's: annotate the allocation")
    if tuple(buf.shape) != layout.shape:
        raise gen.error(where, f"the layout is for shape {list(layout.shape)}, but "
                               f"'{buf.name}' has shape {list(buf.shape)}")
    threads = math.prod(gen.thread_dims)
    try:
        t, regs, amap = layout.tile_layout(threads, buf.name)
    except LayoutError as e:
        raise gen.error(where, str(e)) from None
    buf.value.owner.attributes["layout"] = ir.Attribute.parse(
        f"#tile.layout<threads = {t}, regs = {regs}, map = {amap}>")


def call_Kernel(gen, node):
    raise gen.error(node, "T.Kernel is used as `with T.Kernel(...) as ...:`")


def call_Parallel(gen, node):
    raise gen.error(node, "T.Parallel is used as `for i, j in T.Parallel(...):`")


def call_Pipelined(gen, node):
    raise gen.error(node, "T.Pipelined is used as `for k in T.Pipelined(n, num_stages=...):`")


__all__ = [n for n in dir() if n.startswith("call_")] + ["kernel", "for_loop"]
