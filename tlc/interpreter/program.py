"""Tile IR -> a tree of Python closures ("steps") over a frame of values.

The IR is decoded once: each op becomes a step, a function of the running
`State`, that reads its operands from and writes its results to slots of
`state.env`. Running a block is then a walk over plain Python callables,
with no MLIR object touched. Handlers for each dialect register themselves
in `HANDLERS` by op name.
"""

from __future__ import annotations

import linecache
import re

from .. import ir
from ..compiler.diagnostics import source_location
from .errors import Site
from .numerics import ElementType, element_type

HANDLERS: dict = {}  # op name -> handler(compiler, op) -> step


def handles(*names):
    def register(fn):
        for n in names:
            HANDLERS[n] = fn
        return fn

    return register


class State:
    """What a step sees: the value frame and where in the grid and loops it is."""

    __slots__ = ("env", "blocks", "block", "mask", "parallel_shape", "parallel_lanes",
                 "private", "async_copies", "async_groups", "threads", "warpgroups",
                 "ws_mask")

    def __init__(self, size: int, blocks=None):
        self.env = [None] * size
        self.blocks = blocks  # the blocks to run (None: the whole grid)
        self.block = None  # the block's indices while a tile.kernel body runs
        self.mask = None  # lanes that run (inside a tile.parallel under a run-time `if`)
        self.parallel_shape = None  # the iteration shape of the tile.parallel running
        self.parallel_lanes = ()  # its induction variables' index arrays
        self.private = {}  # local buffers it uses: id -> (buffer, per-iteration copies)
        self.async_copies = []  # async copies issued, not yet committed (their writes)
        self.async_groups = []  # committed groups of async copies, oldest first
        # The block's threads while a kernel that reads the thread index runs
        # its own code (they are then the lanes: tlc.interpreter.threads).
        self.threads = None
        # The scheduler of the concurrent T.ws bodies this code runs in, with
        # the body's task (tlc.interpreter.warp_groups), or None.
        self.warpgroups = None
        # The lanes of the T.ws body this per-thread code runs in (its threads),
        # or None: tile ops there are that body's work.
        self.ws_mask = None

    def fork(self) -> "State":
        """A state for a T.ws body run as its own task: its own value frame
        (the buffers and values defined before shared, by reference) and
        async copies, the same block."""
        other = State(0, self.blocks)
        other.env = list(self.env)
        other.block = self.block
        other.threads = self.threads
        if self.threads is not None:  # a kernel's per-thread code: the same lanes
            other.parallel_shape, other.parallel_lanes = self.parallel_shape, self.parallel_lanes
            other.mask, other.ws_mask = self.mask, self.ws_mask
        return other

    @property
    def in_parallel(self) -> bool:
        """Inside a tile.parallel (not in a kernel's own per-thread code)."""
        return self.parallel_shape is not None and self.threads is None

    @property
    def lanes(self) -> bool:
        """Values may be arrays over lanes (tile.parallel iterations or threads)."""
        return self.parallel_shape is not None


def run_steps(steps, state: State) -> None:
    for step in steps:
        step(state)


class Compiler:
    """Decodes the ops of one func.func into steps."""

    def __init__(self, source_name: str = "-"):
        self.source_name = source_name
        self.slots: dict = {}
        self.parallel_dims: dict = {}  # induction variable of the tile.parallel -> its dim
        self.per_thread = False  # decoding a kernel that reads the thread index

    @property
    def frame_size(self) -> int:
        return len(self.slots)

    def slot(self, value) -> int:
        """The frame slot of an SSA value (assigned on first sight)."""
        s = self.slots.get(value)
        if s is None:
            s = self.slots[value] = len(self.slots)
        return s

    def site(self, op) -> Site:
        """The op's name and user location, for its messages."""
        return Site(op.operation.name, source_location(op.location, self.source_name))

    def etype(self, op, mlir_type) -> ElementType:
        """The ElementType of `mlir_type`; an error at `op` when there is none."""
        t = element_type(mlir_type)
        if t is None:
            raise self.site(op).error(f"the interpreter does not support the type {mlir_type}")
        return t

    def steps(self, block, skip_terminator: bool = False, ops=None) -> list:
        """The steps of a block's ops (or of `ops`, some of them), in order (its
        terminator left to the caller when `skip_terminator`). Consecutive
        tile.ws bodies become one step that runs the bodies of each set of
        warpgroups, in order, as a task beside the other sets'
        (tlc.interpreter.warp_groups.concurrent_bodies).
        """
        from .warp_groups import body_warps, concurrent_bodies

        if ops is None:
            ops = list(block.operations)
            if skip_terminator and ops:
                ops = ops[:-1]
        out, run = [], {}  # run: warps -> their consecutive tile.ws bodies

        def flush():
            if len(run) > 1:
                out.append(concurrent_bodies(self, list(run.values())))
            else:
                for body in run.values():
                    out.extend(s for s in (self.op(op) for op in body) if s is not None)
            run.clear()

        for op in ops:
            if op.operation.name == "tile.ws":
                groups = body_warps(op)
                if groups not in run and any(set(groups) & set(g) for g in run):
                    flush()  # warps shared with another body's: one after the other
                run.setdefault(groups, []).append(op)
                continue
            flush()
            step = self.op(op)
            if step is not None:
                out.append(step)
        flush()
        return out

    def op(self, op):
        """The step of one op (None for ops with nothing to do, like terminators)."""
        handler = HANDLERS.get(op.operation.name)
        if handler is None:
            raise self.site(op).error("the interpreter does not support this op")
        view = op.opview if hasattr(op, "opview") else op
        step = handler(self, view)
        name = op.operation.name
        # (a T.Pipelined loop runs per thread like scf.for: its bounds must
        # agree, its body's tile ops are each the block's; a tile.stage is a
        # view, which a thread's own element access may take)
        if self.per_thread and step is not None and name.startswith("tile.") \
                and not name.startswith("tile.alloc_") and name not in ("tile.kernel",
                                                                        "tile.pipelined",
                                                                        "tile.stage"):
            from .threads import block_op, ws_lanes

            if name == "tile.ws":  # its code runs per thread, on the body's lanes
                return ws_lanes(self, view, step)
            return block_op(self, view, step)
        return step

    def parallel_axes(self, indices) -> tuple | None:
        """The loop dimensions of `indices` when each is an induction variable of the
        enclosing tile.parallel, in increasing order (an access `f[i, j]` or `m[i]`
        whose elements are a plain view of the buffer); else None."""
        dims = [self.parallel_dims.get(v) for v in indices]
        if not dims or None in dims or dims != sorted(set(dims)):
            return None
        return tuple(dims)

    def buffer_name(self, op) -> str:
        """A buffer's name for messages: the name it is assigned to on its source
        line (`A_shared = T.alloc_shared(...)`), else its SSA name and location."""
        loc = source_location(op.location, self.source_name)
        if loc is not None:
            m = re.match(r"\s*([A-Za-z_]\w*)\s*(?::[^=]*)?=\s*T\.alloc_",
                         linecache.getline(loc.file, loc.line))
            if m:
                return m.group(1)
        ssa = op.result.get_name()
        return f"{ssa} at {loc}" if loc is not None else ssa


def func_ops(module) -> dict:
    """The func.func ops of a module by name."""
    out = {}
    for op in module.body.operations:
        if op.operation.name == "func.func":
            out[ir.StringAttr(op.attributes["sym_name"]).value] = op
    return out


def source_name(module) -> str:
    attrs = module.operation.attributes
    return ir.StringAttr(attrs["tile.source"]).value if "tile.source" in attrs else "-"

