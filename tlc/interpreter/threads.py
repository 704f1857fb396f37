"""Kernels that read the thread index (gpu.thread_id, T.get_thread_binding).

Such a kernel's own code (outside the tile ops) runs with the block's
threads as lanes: the thread index is the array [0, threads), values
computed from it are arrays over the threads, run-time `if`s and loops run
under lane masks, and local buffers (T.alloc_var, T.alloc_local) are one
private copy per thread (tlc.interpreter.private). The threads run each op
in lockstep, which is what the barriers the compiler inserts between
conflicting shared-memory accesses give on the GPU.

The tile ops (T.copy, T.Parallel, T.gemm, ...) are the whole block's work:
one runs as in any kernel, and it is an error when it is reached by some
threads only (under an `if` on the thread index) or when it reads a value
that differs between threads. A local buffer it uses keeps the elements all
threads agree on (a later read of one that differed is reported).
"""

from __future__ import annotations

import numpy as np

from .. import ir
from ..frontend.threads import outside_operands
from .private import merge
from .program import handles


def runs_per_thread(op) -> bool:
    """Whether kernel `op` has code whose effect depends on how many threads
    run it: a gpu.thread_id anywhere, an atomic add outside T.Parallel
    (every thread of the block adds), a warp shuffle or vote, or
    T.activemask."""
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                name = inner.operation.name
                if name in ("gpu.thread_id", "memref.atomic_rmw", "nvvm.shfl.sync",
                            "nvvm.vote.sync", "llvm.inline_asm"):
                    return True
                if name != "tile.parallel" and runs_per_thread(inner):
                    return True
    return False


@handles("gpu.thread_id")
def _thread_id(c, op):
    out, site = c.slot(op.result), c.site(op)
    along_x = str(op.attributes["dimension"]).endswith("x>")

    def step(st):
        if st.threads is None:
            raise site.error("the thread index has no value inside T.Parallel (the compiler "
                             "assigns its iterations to threads)", st.block)
        # the kernel is launched with (threads, 1, 1): y and z are 0
        st.env[out] = np.arange(st.threads, dtype=np.int64) if along_x else np.int64(0)

    return step


def _captured(c, op) -> tuple[list, list]:
    """(slots of the non-buffer values `op` and the ops inside it read from
    outside it, slots of the buffers they read)."""
    values, buffers = [], []
    for v in outside_operands(op):
        (buffers if isinstance(v.type, ir.MemRefType) else values).append(c.slot(v))
    return sorted(set(values)), sorted(set(buffers))


def block_op(c, op, step):
    """`step` of a tile op in a kernel that reads the thread index: run by the
    whole block, on values all threads agree on."""
    site = c.site(op)
    values, buffers = _captured(c, op)
    what = f"T.{op.operation.name.split('.')[-1]}" if op.operation.name != "tile.parallel" \
        else "T.Parallel"

    def run(st):
        if st.threads is None:  # inside a tile op already (a T.Pipelined's copies)
            return step(st)
        env = st.env
        body = st.ws_mask  # a T.ws body's lanes: the op is that body's work
        if st.mask is not None and (body is None or not np.array_equal(st.mask, body)):
            raise site.error(f"{what} is work of the whole block, but here only some threads "
                             "reach it (it is under an `if` or loop that depends on "
                             "T.get_thread_binding)", st.block)
        for s in values:
            v = env[s]
            if np.ndim(v):
                flat = np.ravel(v) if body is None or np.shape(v) != np.shape(body) else \
                    np.asarray(v)[body]
                if (flat != flat[0]).any():
                    raise site.error(f"{what} reads a value that differs between the threads "
                                     "(computed from T.get_thread_binding); tile ops take "
                                     "values every thread agrees on", st.block)
                env[s] = flat[0]
        used = {id(env[b]) for b in buffers}
        mine = {k: v for k, v in st.private.items() if k in used}
        if mine:  # their elements the threads agree on go back to the buffers
            rest = {k: v for k, v in st.private.items() if k not in used}
            st.private = mine
            merge(site, st, per_thread=True)
            st.private = rest
        saved = st.threads, st.parallel_shape, st.parallel_lanes, st.private, st.mask, \
            st.ws_mask
        st.threads, st.parallel_shape, st.parallel_lanes, st.private = None, None, (), {}
        st.mask = st.ws_mask = None
        try:
            step(st)
        finally:
            (st.threads, st.parallel_shape, st.parallel_lanes, st.private, st.mask,
             st.ws_mask) = saved

    return run


def ws_lanes(c, op, step):
    """`step` of a tile.ws body in a kernel that reads the thread index: its
    code runs per thread on the body's lanes (its threads), its tile ops as
    the body's work."""
    from .warp_groups import body_warps

    warps = body_warps(op)
    first, count = 32 * warps[0], 32 * len(warps)

    def run(st):
        if st.threads is None:
            return step(st)
        lanes = st.parallel_lanes[0]
        mine = (lanes >= first) & (lanes < first + count)
        saved = st.mask, st.ws_mask
        st.mask = mine if st.mask is None else st.mask & mine
        st.ws_mask = st.mask
        try:
            step(st)
        finally:
            st.mask, st.ws_mask = saved

    return run


def start_block(st, threads: int) -> None:
    """The lanes of a block of `threads` threads, before its kernel body runs."""
    st.threads = threads
    st.parallel_shape, st.parallel_lanes, st.private = (threads,), (np.arange(threads),), {}


def end_block(st) -> None:
    st.threads, st.parallel_shape, st.parallel_lanes, st.private = None, None, (), {}


@handles("nvvm.shfl.sync")
def _shuffle(c, op):
    """A warp shuffle (T.shfl_*) over the block's lanes: groups of `width`
    lanes (from the PTX clamp operand: width = 32 - (clamp >> 8)), each lane
    reading another lane of its group, or its own value where the source
    lies outside the group (down/up past the ends, xor past the width)."""
    value, offset, clamp = (c.slot(v) for v in list(op.operands)[1:4])
    out = c.slot(op.result)
    mode = str(op.attributes["kind"]).rstrip(">").split()[-1]
    site = c.site(op)

    def step(st):
        if st.threads is None:
            raise site.error("a warp shuffle has no lanes inside T.Parallel", st.block)
        lanes = np.arange(st.threads)
        v = np.broadcast_to(np.asarray(st.env[value]), (st.threads,))
        d = np.broadcast_to(np.asarray(st.env[offset]).astype(np.int64), (st.threads,))
        w = 32 - (int(np.asarray(st.env[clamp]).reshape(-1)[0]) >> 8)
        base, lane = lanes - lanes % w, lanes % w
        src = {"bfly": lane ^ d, "down": lane + d, "up": lane - d, "idx": d % w}[mode]
        inside = (src >= 0) & (src < w)
        st.env[out] = np.where(inside, v[base + np.clip(src, 0, w - 1)], v)

    return step


def _per_warp(threads: int, lanes) -> np.ndarray:
    """`lanes` (one bool per thread) as rows of 32, one per warp (lanes past
    the block's last thread False)."""
    padded = np.zeros(-(-threads // 32) * 32, bool)
    padded[:threads] = np.broadcast_to(np.asarray(lanes, bool), (threads,))
    return padded.reshape(-1, 32)


def _bits(rows: np.ndarray) -> np.ndarray:
    """Each row of 32 bools as the 32-bit integer with bit n set for lane n
    (int32, the bits of an i32)."""
    value = (rows.astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(axis=1)
    return value.astype(np.uint32).view(np.int32)


@handles("nvvm.vote.sync")
def _vote(c, op):
    """A warp vote (T.any_sync / all_sync / ballot_sync) over the block's lanes:
    every lane of a warp gets its warp's result (all: over the lanes that exist)."""
    pred, out = c.slot(op.operands[1]), c.slot(op.result)
    kind = str(op.attributes["kind"]).rstrip(">").split()[-1]
    site = c.site(op)

    def step(st):
        if st.threads is None:
            raise site.error("a warp vote has no lanes inside T.Parallel", st.block)
        if st.mask is not None:
            raise site.error("a warp vote where only some lanes run (every lane of the warp "
                             "must run it)", st.block)
        rows = _per_warp(st.threads, st.env[pred])
        if kind == "any":
            per = rows.any(axis=1)
        elif kind == "all":
            per = (rows | ~_per_warp(st.threads, True)).all(axis=1)
        elif kind == "ballot":
            per = _bits(rows)
        else:
            raise site.error(f"the interpreter does not run vote kind '{kind}'", st.block)
        st.env[out] = np.repeat(per, 32)[:st.threads]

    return step


@handles("llvm.inline_asm")
def _inline_asm(c, op):
    """T.activemask (PTX activemask.b32): each lane gets the bits of its
    warp's lanes running the statement (under the enclosing `if`s' masks)."""
    from ..frontend.warp import ACTIVEMASK_PTX, BARRIER_REDUCTIONS, GRID_SYNC_PTX

    asm = ir.StringAttr(op.attributes["asm_string"]).value
    site = c.site(op)
    if asm == GRID_SYNC_PTX:
        raise site.error("T.sync_grid under a condition: the interpreter runs the blocks "
                         "of the grid one after another, splitting the kernel at the "
                         "barriers of its own code and of its serial loops only; run this "
                         "kernel on the GPU")
    reduction = next((k for k, v in BARRIER_REDUCTIONS.items() if v == asm), None)
    if reduction is not None:
        return _barrier_reduction(c, op, reduction, site)
    if asm != ACTIVEMASK_PTX:
        raise site.error(f"the interpreter does not run inline PTX '{asm}'")
    out = c.slot(op.results[0])

    def step(st):
        if st.threads is None:
            raise site.error("T.activemask has no lanes inside T.Parallel", st.block)
        running = True if st.mask is None else st.mask
        st.env[out] = np.repeat(_bits(_per_warp(st.threads, running)), 32)[:st.threads]

    return step


def _barrier_reduction(c, op, name: str, site):
    """T.syncthreads_count / and / or: every thread gets the block's count of
    true predicates (or whether all / any are true)."""
    pred, out = c.slot(op.operands[0]), c.slot(op.results[0])
    combine = {"syncthreads_count": np.sum, "syncthreads_and": np.all,
               "syncthreads_or": np.any}[name]

    def step(st):
        if st.threads is None:
            raise site.error(f"T.{name} has no threads inside T.Parallel", st.block)
        if st.mask is not None:
            raise site.error(f"T.{name} where only some threads run (every thread of the "
                             "block must reach it)", st.block)
        values = np.broadcast_to(np.asarray(st.env[pred]) != 0, (st.threads,))
        st.env[out] = np.full(st.threads, int(combine(values)), dtype=np.int32)

    return step
