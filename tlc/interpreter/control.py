"""Loops, branches and the grid: scf.for / scf.if, tile.parallel, tile.pipelined,
tile.kernel, func.return.

A tile.parallel body runs once, its induction variables bound to index
arrays shaped for broadcasting (np.indices-style, one axis per loop
dimension), so every op in it acts on the whole iteration space at once. A
run-time `if` inside it runs both branches under lane masks.
"""

from __future__ import annotations

import numpy as np

from .. import ir
from .private import merge
from .program import handles, run_steps
from .threads import end_block, runs_per_thread, start_block


def _yield_slots(c, block):
    ops = list(block.operations)
    if not ops or ops[-1].operation.name != "scf.yield":
        return []
    return [c.slot(v) for v in ops[-1].operands]


@handles("scf.for")
def _for(c, op):
    lb, ub, step_ = (c.slot(v) for v in (op.lowerBound, op.upperBound, op.step))
    body = op.regions[0].blocks[0]
    iv = c.slot(body.arguments[0])
    iv_type = c.etype(op, body.arguments[0].type)
    carried_slots = [c.slot(a) for a in list(body.arguments)[1:]]
    inits = [c.slot(v) for v in op.initArgs]
    results = [c.slot(r) for r in op.results]
    steps = c.steps(body, skip_terminator=True)
    yields = _yield_slots(c, body)

    def run(st):
        env = st.env
        lo, hi, s = env[lb], env[ub], env[step_]
        carried = [env[i] for i in inits]
        if np.ndim(lo) == 0 and np.ndim(hi) == 0 and np.ndim(s) == 0:
            for i in range(int(lo), int(hi), int(s)):
                env[iv] = iv_type.make(i)
                for slot, v in zip(carried_slots, carried):
                    env[slot] = v
                run_steps(steps, st)
                carried = [env[y] for y in yields]
        else:  # bounds that differ per lane: the n-th iteration of every lane at once
            saved = st.mask
            trips = np.maximum(0, -(-(np.asarray(hi) - lo) // s))
            if saved is not None:
                trips = np.where(saved, trips, 0)
            try:
                for n in range(int(np.max(trips))):
                    lanes = n < trips
                    st.mask = lanes if saved is None else saved & lanes
                    env[iv] = iv_type.make(lo + n * np.asarray(s))
                    for slot, v in zip(carried_slots, carried):
                        env[slot] = v
                    run_steps(steps, st)
                    carried = [np.where(lanes, env[y], old) for y, old in zip(yields, carried)]
            finally:
                st.mask = saved
        for r, v in zip(results, carried):
            env[r] = v

    return run


@handles("scf.while")
def _while(c, op):
    before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
    condition = list(before.operations)[-1]
    cond = c.slot(condition.operands[0])
    forwarded = [c.slot(v) for v in list(condition.operands)[1:]]
    inits = [c.slot(v) for v in op.operands]
    before_args = [c.slot(a) for a in before.arguments]
    after_args = [c.slot(a) for a in after.arguments]
    results = [c.slot(r) for r in op.results]
    before_steps, after_steps = c.steps(before, True), c.steps(after, True)
    yields = _yield_slots(c, after)

    def run(st):
        env = st.env
        values = [env[i] for i in inits]
        finals = [None] * len(results)
        saved = st.mask
        try:
            while True:
                for slot, v in zip(before_args, values):
                    env[slot] = v
                run_steps(before_steps, st)
                p, out = env[cond], [env[f] for f in forwarded]
                if np.ndim(p) == 0 and st.mask is None:  # every lane (or no lanes) agree
                    if not p:
                        finals = out
                        break
                else:  # lanes leave the loop one by one (per-thread conditions)
                    running = np.asarray(p) if st.mask is None else st.mask & p
                    stopping = ~np.asarray(p) if st.mask is None else st.mask & ~p
                    finals = [v if f is None else np.where(stopping, v, f)
                              for v, f in zip(out, finals)]
                    if not running.any():
                        break
                    st.mask = running
                for slot, v in zip(after_args, out):
                    env[slot] = v
                run_steps(after_steps, st)
                values = [env[y] if st.mask is None else np.where(st.mask, env[y], old)
                          for y, old in zip(yields, values)]
        finally:
            st.mask = saved
        for r, v in zip(results, finals):
            env[r] = v

    return run


@handles("scf.if")
def _if(c, op):
    cond = c.slot(op.condition)
    then_block = op.regions[0].blocks[0]
    then_steps, then_yields = c.steps(then_block, True), _yield_slots(c, then_block)
    else_steps, else_yields = [], []
    if len(op.regions) > 1 and len(op.regions[1].blocks):
        else_block = op.regions[1].blocks[0]
        else_steps, else_yields = c.steps(else_block, True), _yield_slots(c, else_block)
    results = [c.slot(r) for r in op.results]
    types = [c.etype(op, r.type) for r in op.results]

    def run(st):
        env = st.env
        p = env[cond]
        if np.ndim(p) == 0:
            run_steps(then_steps if p else else_steps, st)
            for r, y in zip(results, then_yields if p else else_yields):
                env[r] = env[y]
            return
        saved = st.mask
        try:
            for lanes, steps in ((p, then_steps), (~p, else_steps)):
                st.mask = lanes if saved is None else saved & lanes
                if steps and st.mask.any():
                    run_steps(steps, st)
        finally:
            st.mask = saved
        for r, t, a, b in zip(results, types, then_yields, else_yields):
            env[r] = t.make(np.where(p, env[a], env[b]))

    return run


@handles("scf.yield", "func.return")
def _terminator(c, op):
    return None  # read by the enclosing op


@handles("tile.parallel")
def _parallel(c, op):
    shape = tuple(ir.DenseI64ArrayAttr(op.attributes["shape"]))
    body = op.regions[0].blocks[0]
    ivs = [c.slot(a) for a in body.arguments]
    rank = len(shape)
    ranges = [np.arange(n, dtype=np.int64).reshape([n if k == d else 1 for k in range(rank)])
              for d, n in enumerate(shape)]
    c.parallel_dims = {a: d for d, a in enumerate(body.arguments)}
    try:
        steps = c.steps(body)
    finally:
        c.parallel_dims = {}
    site = c.site(op)

    def run(st):
        env = st.env
        for slot, r in zip(ivs, ranges):
            env[slot] = r
        st.parallel_shape, st.parallel_lanes, st.private = shape, ranges, {}
        try:
            run_steps(steps, st)
            merge(site, st)
        finally:
            st.parallel_shape, st.parallel_lanes, st.private = None, (), {}

    return run


@handles("tile.pipelined")
def _pipelined(c, op):
    lb, ub, step_ = (c.slot(v) for v in op.operands[:3])
    body = op.regions[0].blocks[0]
    iv = c.slot(body.arguments[0])
    steps = c.steps(body)

    site = c.site(op)
    why = ("T.Pipelined's bounds differ between the threads (computed from "
           "T.get_thread_binding); they must agree")

    def run(st):  # num_stages only overlaps copies on the GPU; the result is a plain loop's
        env = st.env
        for i in range(*(_uniform(site, env[v], st.block, why) for v in (lb, ub, step_))):
            env[iv] = i
            run_steps(steps, st)

    return run


def _uniform(site, v, block, why: str) -> int:
    """`v` as an int: one value, or a value per lane (in a kernel that reads
    the thread index) that every lane agrees on; else `why`, at `site`."""
    if np.ndim(v):
        flat = np.ravel(v)
        if (flat != flat[0]).any():
            raise site.error(why, block)
        v = flat[0]
    return int(v)


@handles("tile.kernel")
def _kernel(c, op):
    site = c.site(op)
    if "tile.cluster_dims" in op.attributes:
        raise site.error("the interpreter runs one block at a time, so not a kernel launched in "
                         "thread-block clusters (cluster_dims), whose blocks run together")
    grid = [c.slot(v) for v in op.operands]
    body = op.regions[0].blocks[0]
    indices = [c.slot(a) for a in body.arguments]
    per_thread = runs_per_thread(op)
    threads = ir.IntegerAttr(op.attributes["threads"]).value
    c.per_thread = per_thread
    try:
        # T.sync_grid in the body's own code (or in serial loops of it) splits
        # it into phases, each run by every block before the next starts.
        plan = _grid_plan(c, body, list(body.operations))
    finally:
        c.per_thread = False

    def enter(st, block):  # the block's indices and, per thread, its lanes
        st.block, st.async_copies, st.async_groups = block, [], []
        for slot, b in zip(indices, block):
            st.env[slot] = b
        if per_thread:
            start_block(st, threads)

    if len(plan) == 1 and plan[0][0] == "ops":  # no grid barrier: block after block
        steps = plan[0][1]

        def run(st):
            env = st.env
            for block in _selected_blocks(site, tuple(int(env[g]) for g in grid), st.blocks):
                enter(st, block)
                try:
                    run_steps(steps, st)
                finally:
                    if per_thread:
                        end_block(st)
            st.block = None

        return run

    def run_phased(st):
        env = st.env
        sizes = tuple(int(env[g]) for g in grid)
        blocks = _selected_blocks(site, sizes, st.blocks)
        if st.blocks is not None:
            raise site.error("blocks= runs some blocks of the grid, but this kernel waits "
                             "for all of them at its T.sync_grid: run the whole grid")
        saved = {}  # block -> its frame and thread state between phases
        for block in blocks:
            enter(st, block)
            saved[block] = _save(st)
        try:
            _run_plan(site, plan, blocks, saved, st)
        finally:
            for block in blocks:
                if per_thread and block in saved:
                    _restore(st, saved[block])
                    end_block(st)
            st.block = None

    return run_phased


def _run_plan(site, plan, blocks, saved, st) -> None:
    """Runs `plan` (_grid_plan) over all `blocks`: each segment of ops by every
    block in turn (its state restored from and saved to `saved`), a loop's
    iterations all blocks together."""
    env = st.env
    for item in plan:
        if item[0] == "ops":
            for block in blocks:
                _restore(st, saved[block])
                run_steps(item[1], st)
                saved[block] = _save(st)
            continue
        _, (lb, ub, step_), iv, iv_type, body = item
        ranges = set()
        why = ("a loop with T.sync_grid in it has bounds that differ between the threads: "
               "every thread must reach each barrier")
        for block in blocks:  # a loop with a grid barrier: the same trips in every block
            _restore(st, saved[block])
            ranges.add(tuple(_uniform(site, env[v], block, why) for v in (lb, ub, step_)))
        if len(ranges) > 1:
            raise site.error("a loop with T.sync_grid in it has bounds that differ between the "
                             "blocks: every block must reach each barrier")
        for i in range(*ranges.pop()):
            for block in blocks:
                _restore(st, saved[block])
                env[iv] = iv_type.make(i)
                saved[block] = _save(st)
            _run_plan(site, body, blocks, saved, st)


_BLOCK_STATE = ("block", "async_copies", "async_groups", "threads", "parallel_shape",
                "parallel_lanes", "private")


def _save(st) -> tuple:
    return list(st.env), {name: getattr(st, name) for name in _BLOCK_STATE}


def _restore(st, saved) -> None:
    env, state = saved
    st.env[:] = env
    for name, value in state.items():
        setattr(st, name, value)


def _grid_barrier(op) -> bool:
    from ..frontend.warp import GRID_SYNC_PTX

    return op.operation.name == "llvm.inline_asm" and \
        ir.StringAttr(op.attributes["asm_string"]).value == GRID_SYNC_PTX


def _holds_grid_barrier(op) -> bool:
    """Whether a serial loop has a T.sync_grid in its own code or in serial
    loops of it (a barrier under a condition is the step's own error)."""
    if op.operation.name != "scf.for":
        return False
    return any(_grid_barrier(o) or _holds_grid_barrier(o)
               for o in op.regions[0].blocks[0].operations)


def _grid_plan(c, block, ops) -> list:
    """`ops` of `block` as segments run by every block in turn, split at the
    T.sync_grid barriers (dropped): ("ops", steps), and ("loop", bound
    slots, induction slot, its type, the body's plan) for a serial loop
    (carrying no values) with a barrier in it."""
    plan, pending = [], []

    def flush():
        plan.append(("ops", c.steps(block, ops=list(pending))))
        pending.clear()

    for op in ops:
        if _grid_barrier(op):
            flush()
        elif _holds_grid_barrier(op):
            if len(op.results):
                raise c.site(op).error("a loop with T.sync_grid in it carries values: the "
                                       "interpreter runs such loops over the whole grid "
                                       "(write the values to buffers)")
            flush()
            body = op.regions[0].blocks[0]
            bounds = tuple(c.slot(v) for v in (op.lowerBound, op.upperBound, op.step))
            plan.append(("loop", bounds, c.slot(body.arguments[0]),
                         c.etype(op, body.arguments[0].type),
                         _grid_plan(c, body, list(body.operations)[:-1])))
        else:
            pending.append(op)
    flush()
    return plan


def _selected_blocks(site, sizes, chosen):
    """The blocks to run: all of the grid (x fastest), or the chosen ones, checked."""
    if chosen is None:
        return [tuple(reversed(b)) for b in np.ndindex(*reversed(sizes))]
    out = []
    for b in chosen:
        b = (b,) if isinstance(b, (int, np.integer)) else tuple(b)
        if len(b) != len(sizes) or not all(0 <= int(x) < n for x, n in zip(b, sizes)):
            raise site.error(f"blocks: {b} is not a block of the grid {sizes} (give one index "
                             f"per grid dimension, each in range)")
        out.append(tuple(int(x) for x in b))
    return out
