"""Thread-block clusters: T.Kernel's cluster_dims, T.cluster_arrive /
T.cluster_arrive_relaxed / T.cluster_wait / T.cluster_sync (nvvm.cluster.*,
every thread of the block) and T.block_rank_in_cluster (%cluster_ctarank).

A kernel launched in clusters carries `tile.cluster_dims` (x, y, z), which
tile-outline-kernels turns into the function's `nvvm.cluster_dim` (PTX's
.reqnctapercluster) and the artifact's `cluster_dims`. Its body ends with a
cluster barrier: no block exits while another may still multicast into its
shared memory or arrive at its barriers.
"""

from __future__ import annotations

import math

from .. import ir
from ..language import cluster
from .intrinsic_args import bind_args
from .values import Affine

# The cluster sizes every sm_90 launch accepts (more needs a non-portable
# opt-in per kernel).
MAX_CLUSTER = 8


def cluster_dims(gen, a, grid, call) -> tuple[int, int, int] | None:
    """T.Kernel's cluster_dims, checked against the grid; None without it."""
    if "cluster_dims" not in a.given:
        return None
    node = a["cluster_dims"]
    value = gen.eval_static(node)
    if value is None:
        return None
    dims = [value] if isinstance(value, int) else value
    if not isinstance(dims, (tuple, list)) or not 1 <= len(dims) <= 3 or any(
            isinstance(d, bool) or not isinstance(d, int) or d < 1 for d in dims):
        raise gen.error(node, "cluster_dims must be a positive compile-time integer or a tuple "
                              f"of 1 to 3 of them, got {value!r}")
    dims = list(dims) + [1] * (3 - len(dims))
    if math.prod(dims) > MAX_CLUSTER:
        raise gen.error(node, f"a cluster of {dims[0]} x {dims[1]} x {dims[2]} blocks is more "
                              f"than the {MAX_CLUSTER} blocks a cluster may have")
    for axis, d in enumerate(dims):
        if d == 1:
            continue
        if axis >= len(grid):
            raise gen.error(node, f"cluster_dims has {d} blocks along {'xyz'[axis]}, but the "
                                  f"grid has {len(grid)} dimension(s)")
        g = grid[axis]
        if isinstance(g, int) and not isinstance(g, bool) and g % d:
            raise gen.error(node, f"the grid's {g} blocks along {'xyz'[axis]} are not whole "
                                  f"clusters of {d}")
    return tuple(dims)


def mark_kernel(op, dims) -> None:
    op.attributes["tile.cluster_dims"] = ir.DenseI32ArrayAttr.get(list(dims))


def cluster_kernel(gen):
    """The kernel's cluster sizes, or None."""
    attrs = gen.kernel.attributes
    return ir.DenseI32ArrayAttr(attrs["tile.cluster_dims"]) if "tile.cluster_dims" in attrs \
        else None


def require_clusters(gen, node, what: str):
    """The kernel's cluster sizes; an error at `node` when it has none."""
    gen.require_kernel(node, what)
    dims = cluster_kernel(gen)
    if dims is None:
        raise gen.error(node, f"{what} needs a kernel launched in clusters: "
                              "T.Kernel(..., cluster_dims=...)")
    return dims


def _every_thread(gen, node, what: str) -> None:
    from .warp_groups import in_every_thread

    require_clusters(gen, node, what)
    if gen.parallel_depth or not in_every_thread(gen):
        raise gen.error(node, f"{what} is a barrier of every thread of the cluster's blocks: "
                              "use it in the kernel's own code, which every thread runs (not in "
                              "T.Parallel, a branch or a T.ws body)")


def arrive(relaxed: bool = False) -> None:
    attrs = {"aligned": ir.UnitAttr.get()}
    ir.Operation.create("nvvm.cluster.arrive.relaxed" if relaxed else "nvvm.cluster.arrive",
                        attributes=attrs)


def wait() -> None:
    ir.Operation.create("nvvm.cluster.wait", attributes={"aligned": ir.UnitAttr.get()})


def _cluster_barrier(gen, node, fn, emit) -> None:
    """T.cluster_arrive and its kin: every thread of the block runs `emit`."""
    bind_args(gen, node, fn)
    _every_thread(gen, node, f"T.{fn.__name__}")
    with gen.loc(node):
        emit()


def call_cluster_arrive(gen, node):
    _cluster_barrier(gen, node, cluster.cluster_arrive, arrive)


def call_cluster_arrive_relaxed(gen, node):
    _cluster_barrier(gen, node, cluster.cluster_arrive_relaxed, lambda: arrive(relaxed=True))


def call_cluster_wait(gen, node):
    _cluster_barrier(gen, node, cluster.cluster_wait, wait)


def call_cluster_sync(gen, node):
    _cluster_barrier(gen, node, cluster.cluster_sync, lambda: (arrive(), wait()))


def rank(gen):
    """%cluster_ctarank as an index value in [0, cluster size)."""
    from ..dialects import arith

    i32 = ir.IntegerType.get_signless(32)
    value = ir.Operation.create("nvvm.read.ptx.sreg.cluster.ctarank", results=[i32]).result
    index = arith.index_cast(ir.IndexType.get(), value)
    gen.ranges[index] = (0, math.prod(cluster_kernel(gen)) - 1)
    return index


def call_block_rank_in_cluster(gen, node):
    bind_args(gen, node, cluster.block_rank_in_cluster)
    require_clusters(gen, node, "T.block_rank_in_cluster")
    with gen.loc(node):
        return Affine.leaf(rank(gen))
