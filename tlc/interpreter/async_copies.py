"""The synchronization ops of pipelined tile IR (after tile-pipeline-loops):
nvvm.cp.async.commit.group / wait.group and gpu.barrier.

An async tile.copy reads its source when issued but writes its destination
only when a wait.group completes the group it was committed in, as cp.async
does (or a prefetching tile.gemm's own wait: tile_ops.py); so interpreting the optimized IR checks the pipeliner's waits: a stage
read before its copy landed holds the previous tile (or, never written, is
reported). The whole block runs as one thread here: a barrier has nothing to
order.
"""

from __future__ import annotations

from .. import ir
from .program import handles


@handles("nvvm.cp.async.commit.group")
def _commit(c, op):
    def step(st):
        st.async_groups.append(st.async_copies)
        st.async_copies = []

    return step


def complete_async_groups(st, n: int) -> None:
    """All but the `n` most recently committed groups land."""
    while len(st.async_groups) > n:
        for write in st.async_groups.pop(0):
            write()


@handles("nvvm.cp.async.wait.group")
def _wait(c, op):
    n = ir.IntegerAttr(op.attributes["n"]).value

    def step(st):
        complete_async_groups(st, n)

    return step


@handles("gpu.barrier")
def _barrier(c, op):
    return None
