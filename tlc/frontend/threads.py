"""T.get_thread_binding: the running thread's index, per thread dimension.

A kernel launches `threads` threads in one dimension (gpu.thread_id x);
`threads=(x, y[, z])` launches x*y*z of them and the per-dimension indices
are computed from the linear one, x fastest (tx + x * (ty + y * tz)), which
is CUDA's own order for a block of (x, y, z) threads.

The kernel's own code (outside T.Parallel) runs in every thread, so a value
computed from the thread index differs per thread: it may index buffers,
choose `if` branches and bound loops. Inside T.Parallel the compiler assigns
iterations to threads itself, so the thread index has no meaning there and
is an error. Shared memory may be accessed in code only some threads run:
tile-insert-barriers places the barriers it needs before and after that
code, never inside (where the program orders its threads, as in CUDA).
"""

from __future__ import annotations

import ast
import math

from .. import ir
from ..dialects import arith
from ..language import loops
from .intrinsic_args import bind_args
from .values import Affine

_AXES = 3


def thread_dims(gen, call, threads) -> tuple[int, int]:
    """(per-dimension sizes, total) of T.Kernel's `threads=` (an int or a tuple
    of 1 to 3 positive ints); errors at `call`'s threads keyword."""
    where = next((kw for kw in call.keywords if kw.arg == "threads"), call)
    if isinstance(threads, (tuple, list)):
        if not 1 <= len(threads) <= _AXES or not all(
                isinstance(t, int) and not isinstance(t, bool) and t >= 1 for t in threads):
            raise gen.error(where, f"threads=(x, y, z) takes 1 to 3 positive integers, got "
                                   f"{tuple(threads)!r}")
        total = math.prod(threads)
        if total > 1024:
            raise gen.error(where, f"threads={tuple(threads)!r} is {total} threads per block; "
                                   "a block has at most 1024")
        return tuple(threads), total
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= 1024:
        raise gen.error(where, f"threads must be an integer in [1, 1024], got {threads!r}")
    return (threads,), threads


def call_get_thread_binding(gen, node, checked: bool = False) -> Affine | int:
    """`tx = T.get_thread_binding(dim=0)`: an index in [0, size of dimension dim)."""
    name = "T.thread_binding" if checked else "T.get_thread_binding"
    gen.require_kernel(node, name)
    if gen.parallel_depth:
        raise gen.error(node, f"{name} is not valid inside T.Parallel: the "
                              "compiler decides which thread runs each iteration; use the "
                              "loop's indices there (or read the thread index before the loop "
                              "and use it outside T.Parallel)")
    if checked:
        dim = node.args[0].value
    else:
        a = bind_args(gen, node, loops.get_thread_binding)
        dim = gen.eval_static(a["dim"])
    dims = gen.thread_dims
    if isinstance(dim, bool) or not isinstance(dim, int) or not 0 <= dim < _AXES:
        raise gen.error(a["dim"], f"T.get_thread_binding's dim is 0, 1 or 2, got {dim!r}")
    if dim >= len(dims):
        return 0  # a dimension T.Kernel did not give has one thread
    gen.uses_thread_index = True
    from ..dialects import gpu  # the GPU dialect's bindings load only for kernels that ask

    index = ir.IndexType.get()
    value = gpu.thread_id(gpu.Dimension.x)
    gen.ranges[value] = (0, math.prod(dims) - 1)
    stride = math.prod(dims[:dim])
    if stride > 1:
        value = arith.divui(value, arith.constant(index, stride))
    if dim < len(dims) - 1:
        value = arith.remui(value, arith.constant(index, dims[dim]))
    gen.ranges[value] = (0, dims[dim] - 1)
    return Affine.leaf(value)


def call_thread_binding(gen, node) -> Affine | int:
    """`tx = T.thread_binding(0, N, thread="threadIdx.x")`: TVM's spelling of
    T.get_thread_binding, whose range must be the whole dimension."""
    a = bind_args(gen, node, loops.thread_binding)
    start = gen.eval_static(a["start"])
    stop = gen.eval_static(a["stop"]) if "stop" in a else None
    if stop is None:
        start, stop = 0, start
    thread = gen.eval_static(a["thread"]) if "thread" in a else "threadIdx.x"
    axes = {"threadIdx.x": 0, "threadIdx.y": 1, "threadIdx.z": 2}
    if thread not in axes:
        raise gen.error(a.get("thread", node), f"T.thread_binding binds threadIdx.x, .y or .z, "
                                               f"got {thread!r} (block indices are T.Kernel's)")
    dim = axes[thread]
    dims = getattr(gen, "thread_dims", None) or (0,)
    size = dims[dim] if dim < len(dims) else 1
    if start != 0 or stop != size:
        raise gen.error(node, f"T.thread_binding({start}, {stop}) of {thread} must cover the "
                              f"{size} threads T.Kernel gives that dimension: "
                              f"T.thread_binding(0, {size}, thread={thread!r})")
    call = ast.copy_location(ast.Call(func=node.func, args=[ast.Constant(dim)], keywords=[]), node)
    return call_get_thread_binding(gen, call, checked=True)


# -- what depends on the thread index ----------------------------------------------

_TILE_NAMES = {"tile.copy": "T.copy", "tile.fill": "T.fill/T.clear", "tile.gemm": "T.gemm",
               "tile.reduce": "T.reduce", "tile.parallel": "T.Parallel",
               "tile.pipelined": "T.Pipelined"}


class _Region(str):
    """What makes code divergent (its description, for messages) and the op
    that does (an scf.if / for / while on the thread index)."""

    def __new__(cls, text: str, op):
        region = super().__new__(cls, text)
        region.op = op
        return region


class _Divergence:
    """Which values and local buffers of a kernel differ between its threads
    (computed from gpu.thread_id), and which regions only some threads run."""

    def __init__(self):
        self.values: set = set()  # SSA values that differ per thread
        self.locals: set = set()  # local buffers (T.alloc_var/local) holding such values
        self.problems: list = []  # (op, message), found by the last walk

    def walk(self, block, divergent: str | None) -> None:
        """Walks `block`; `divergent` describes the enclosing region that only
        some threads run (None when every thread runs it)."""
        for op in block.operations:
            self.visit(op, divergent)

    def tainted(self, values) -> bool:
        return any(v in self.values for v in values)

    def visit(self, op, divergent: str | None) -> None:
        name = op.operation.name
        operands = list(op.operands)
        if name == "gpu.thread_id":
            self.values.update(op.results)
            return
        if name in ("nvvm.shfl.sync", "nvvm.vote.sync", "gpu.barrier", "nvvm.bar.warp.sync"):
            what = {"nvvm.shfl.sync": "a warp shuffle (every lane of the warp must run it)",
                    "nvvm.vote.sync": "a warp vote (every lane of the warp must run it)",
                    "gpu.barrier": "T.sync_threads (every thread of the block must reach it)",
                    "nvvm.bar.warp.sync": "T.sync_warp (every lane must reach it)"}[name]
            if divergent:
                self.problems.append((op, f"{what}, but only some threads reach it here "
                                          f"({divergent})"))
            if name in ("nvvm.shfl.sync", "nvvm.vote.sync"):  # other lanes' values
                self.values.update(op.results)
            return
        if name == "llvm.inline_asm":
            from .warp import BARRIER_REDUCTIONS, GRID_SYNC_PTX

            asm = ir.StringAttr(op.attributes["asm_string"]).value
            if asm == GRID_SYNC_PTX:
                if divergent:
                    self.problems.append((op, "T.sync_grid is a barrier of the whole grid "
                                              "(every thread of every block must reach it), "
                                              f"but only some threads reach it here "
                                              f"({divergent})"))
                return
            if asm in BARRIER_REDUCTIONS.values():  # T.syncthreads_count: all agree
                if divergent:
                    self.problems.append((op, "T.syncthreads_count / and / or is a barrier "
                                              "(every thread of the block must reach it), "
                                              f"but only some threads reach it here "
                                              f"({divergent})"))
                return
            self.values.update(op.results)  # T.activemask: which lanes run it
            return
        if name == "tile.fill" and "local" in str(operands[0].type.memory_space or ""):
            # T.clear / T.fill of a local buffer: each thread fills its own
            if divergent or self.tainted(operands[1:]):
                self.locals.add(operands[0])
            return
        if name == "tile.shared_ptr":  # an address (T.mbarrier_arrive's cta_id): any thread's
            if divergent or self.tainted(operands):
                self.values.update(op.results)
            return
        if name in _TILE_NAMES or name.startswith("tile.") and not name.startswith(
                "tile.alloc") and name != "tile.stage":
            what = _TILE_NAMES.get(name, name)
            if divergent:
                self.problems.append((op, f"{what} is work of the whole block, but only some "
                                          f"threads reach it here ({divergent})"))
            elif any(v in self.values or v in self.locals for v in (
                    list(op.operands) if name in ("tile.pipelined", "tile.ws")
                    else outside_operands(op))):
                # (a T.Pipelined loop's body, and a warpgroup body, are walked
                # below, op by op: only a loop's bounds must agree; a body's
                # threads may compute their own values, e.g. per-thread copies)
                self.problems.append((op, f"{what} reads a value that differs between the "
                                          "threads (computed from T.get_thread_binding); tile "
                                          "operations take values all threads agree on"))
            if name in ("tile.pipelined", "tile.ws"):
                for region in op.regions:
                    for block in region.blocks:
                        self.walk(block, divergent)
            return
        if name in ("memref.load", "memref.store", "memref.atomic_rmw"):
            buf = operands[{"memref.load": 0, "memref.store": 1}.get(name, 1)]
            space = str(buf.type.memory_space) if buf.type.memory_space else ""
            if "workgroup" in space and divergent:
                # tile-insert-barriers places no barrier inside such code: the
                # ones its accesses need go before and after it (a hazard
                # between two of its own accesses is an error there).
                divergent.op.attributes["tile.divergent"] = ir.UnitAttr.get()
            if name == "memref.atomic_rmw":
                if self.tainted(operands) or divergent:
                    self.values.update(op.results)
                return
            if name == "memref.load":
                if buf in self.locals or self.tainted(operands[1:]):
                    self.values.update(op.results)
            elif "local" in space and (divergent or self.tainted(operands)):
                self.locals.add(buf)
            elif not space and not divergent and not self.tainted(operands[2:]) and \
                    self.tainted(operands[:1]):
                # Every thread writes the element (TileLang's plain statements run in
                # every thread), each a value of its own: which one lands is a race.
                self.problems.append((op, "every thread stores to this global element (the "
                                          "index is the same for all), each a value that "
                                          "differs between the threads; store per thread at "
                                          "an index from T.get_thread_binding(), or from one "
                                          "thread (`if tx == 0:`)"))
            return
        if name == "scf.if":
            inner = divergent or (_Region(f"the `if` at {_line(op)} on the thread index", op)
                                  if self.tainted(operands[:1]) else None)
            for region in op.regions:
                for block in region.blocks:
                    self.walk(block, inner)
        elif name == "scf.for":
            inner = divergent
            if self.tainted(operands[:3]):
                inner = divergent or _Region(f"the loop at {_line(op)} whose bounds depend on "
                                             "the thread index", op)
                self.values.update(op.regions[0].blocks[0].arguments)
            self.walk(op.regions[0].blocks[0], inner)
        elif name == "scf.while":
            before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
            self.walk(before, divergent)  # every thread evaluates the first condition
            condition = list(before.operations)[-1]
            inner = divergent or (_Region(f"the `while` at {_line(op)} whose condition "
                                          "depends on the thread index", op)
                                  if self.tainted(condition.operands[:1]) else None)
            self.walk(before, inner)
            self.walk(after, inner)
        if self.tainted(operands) or (divergent and op.results):
            self.values.update(op.results)


def outside_operands(op) -> list:
    """The values `op` and the ops inside it read from outside it."""
    defined, used = set(), []

    def walk(o):
        used.extend(o.operands)
        for region in o.regions:
            for block in region.blocks:
                defined.update(block.arguments)
                for inner in block.operations:
                    defined.update(inner.results)
                    walk(inner)

    walk(op.operation)
    return [v for v in used if v not in defined]


def _line(op) -> str:
    from ..compiler.diagnostics import source_location

    loc = source_location(op.location)
    return f"line {loc.line}" if loc is not None else "an enclosing statement"


def check_divergence(gen, kernel_op) -> None:
    """Errors at the user's line for what the thread index cannot reach yet:
    tile operations only some threads run or fed values that differ per
    thread. Thread-dependent control flow around shared-memory accesses is
    marked `tile.divergent` for tile-insert-barriers, which places no
    barrier inside it."""
    from ..compiler.diagnostics import source_location
    from ..errors import CompilationError, Diagnostic

    d = _Divergence()
    body = kernel_op.regions[0].blocks[0]
    before = -1
    while before != len(d.values) + len(d.locals):  # until loops' values settle
        before = len(d.values) + len(d.locals)
        d.problems = []
        d.walk(body, None)
    if d.problems:
        op, message = d.problems[0]
        loc = source_location(op.location, gen.prim.filename)
        raise CompilationError([Diagnostic(message, loc)])


def call_get_block_binding(gen, node) -> Affine | int:
    """`by = T.get_block_binding(1)`: the block index along a grid dimension (the value
    `with T.Kernel(...) as (bx, by)` binds), 0 along one T.Kernel did not give."""
    gen.require_kernel(node, "T.get_block_binding")
    a = bind_args(gen, node, loops.get_block_binding)
    dim = gen.eval_static(a["dim"])
    if isinstance(dim, bool) or not isinstance(dim, int) or not 0 <= dim < _AXES:
        raise gen.error(a["dim"], f"T.get_block_binding's dim is 0, 1 or 2, got {dim!r}")
    indices = gen.kernel.regions[0].blocks[0].arguments
    if dim >= len(indices):
        return 0
    return Affine.leaf(indices[dim])


def call_disable_warp_group_reg_alloc(gen, node, name: str = "disable_warp_group_reg_alloc"):
    """Marks the kernel: its warp-specialized loop moves no registers between warpgroups
    (tile-pipeline-loops reads tile.no_register_moves)."""
    gen.require_kernel(node, f"T.{name}")
    bind_args(gen, node, getattr(loops, name))
    gen.kernel.attributes["tile.no_register_moves"] = ir.UnitAttr.get()


def call_no_set_max_nreg(gen, node):
    return call_disable_warp_group_reg_alloc(gen, node, "no_set_max_nreg")


def call_annotate_min_blocks_per_sm(gen, node):
    """T.annotate_min_blocks_per_sm(n): the kernel's tile.min_blocks_per_sm,
    which tile-outline-kernels makes PTX's .minnctapersm."""
    gen.require_kernel(node, "T.annotate_min_blocks_per_sm")
    a = bind_args(gen, node, loops.annotate_min_blocks_per_sm)
    blocks = gen.eval_int(a["blocks"], "the number of blocks")
    if blocks < 1:
        raise gen.error(a["blocks"], f"T.annotate_min_blocks_per_sm takes a positive number of "
                                     f"blocks, got {blocks}")
    gen.kernel.attributes["tile.min_blocks_per_sm"] = ir.IntegerAttr.get(
        ir.IntegerType.get_signless(64), blocks)
