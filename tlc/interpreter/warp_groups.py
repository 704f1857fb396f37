"""Hand-written warp specialization: tile.ws bodies and the program's own
mbarriers (tile.init_barriers, tile.barrier_wait, tile.barrier_arrive).

The interpreter runs a block's ops in program order, so a tile.ws body runs
where it stands (its tile ops as the work of its warpgroups). An mbarrier
is modelled as on the GPU: it counts arrivals down from its count, a phase
completes when they reach zero (the count starts again), and a wait for a
parity returns once the phase of that parity completed (the first phase has
parity 0; waiting for parity 1 before it completed returns at once). A wait
the arrivals so far cannot satisfy is an error: on the GPU the warpgroups
run concurrently and a later arrival may release it, but in program order
nothing can.
"""

from __future__ import annotations

from .. import ir
from .program import handles

WARPGROUP = 128


class _Barriers:
    """The state of a buffer of mbarriers: per barrier, its arrival count,
    the arrivals its current phase still needs, and the phases completed."""

    def __init__(self, counts):
        self.counts = list(counts)
        self.pending = list(counts)
        self.completed = [0] * len(counts)

    def arrive(self, i: int, n: int) -> None:
        self.pending[i] -= n
        while self.pending[i] <= 0:
            self.completed[i] += 1
            self.pending[i] += self.counts[i]


def _threads_running(op) -> int:
    """How many threads run `op` (outside a tile.parallel): its tile.ws body's,
    else its kernel's."""
    parent = op.operation.parent
    while parent is not None:
        if parent.name == "tile.ws":
            return WARPGROUP * len(ir.DenseI64ArrayAttr(parent.attributes["warpgroups"]))
        if parent.name == "tile.kernel":
            return ir.IntegerAttr(parent.attributes["threads"]).value
        parent = parent.parent
    return 1


@handles("tile.ws")
def _ws(c, op):
    steps = c.steps(op.regions[0].blocks[0])

    def run(st):
        for step in steps:
            step(st)

    return run


@handles("tile.init_barriers")
def _init(c, op):
    bars = c.slot(op.operands[0])
    counts = list(ir.DenseI64ArrayAttr(op.attributes["counts"]))

    def step(st):
        buf = st.env[bars]
        buf.barriers = _Barriers(counts)
        buf.written[...] = True

    return step


def _state(site, st, buf):
    state = getattr(buf, "barriers", None)
    if state is None:
        raise site.error("uses mbarriers no tile.init_barriers initialised", st.block)
    return state


def _index(site, st, state, value) -> int:
    i = int(value)
    if not 0 <= i < len(state.counts):
        raise site.error(f"barrier {i} is out of range: there are {len(state.counts)}",
                         st.block)
    return i


@handles("tile.barrier_wait")
def _wait(c, op):
    site = c.site(op)
    bars, index, parity = (c.slot(v) for v in op.operands)

    def step(st):
        state = _state(site, st, st.env[bars])
        i = _index(site, st, state, st.env[index])
        want = int(st.env[parity]) & 1
        # Phase p (0, 1, ...) has parity p % 2; the wait returns once the
        # latest phase of that parity before the current one completed.
        if state.completed[i] % 2 == want:
            raise site.error(
                f"waits for parity {want} of barrier {i}, whose phase {state.completed[i]} "
                f"still needs {state.pending[i]} of its {state.counts[i]} arrivals: in "
                f"program order nothing arrives before this wait (the interpreter runs "
                f"T.ws bodies where they stand; on the GPU this would hang unless another "
                f"warpgroup arrives concurrently, which the interpreter cannot model)",
                st.block)

    return step


@handles("tile.barrier_arrive")
def _arrive(c, op):
    site = c.site(op)
    bars, index = (c.slot(v) for v in op.operands)
    threads = _threads_running(op)

    def step(st):
        state = _state(site, st, st.env[bars])
        i = _index(site, st, state, st.env[index])
        state.arrive(i, threads)

    return step

