"""Thread-block clusters (sm_90a): `T.Kernel(..., cluster_dims=(2, 1, 1))`
launches the grid in clusters of that many blocks, which run at the same
time on one GPC and reach each other's shared memory. These synchronise the
blocks of a cluster and name a block's place in it; `T.tma_copy(...,
cluster_mask=...)` multicasts a load to several of them and
`T.mbarrier_arrive(bar, cta_id=...)` arrives at another block's barrier.
"""

from __future__ import annotations

from .intrinsic import intrinsic, outside_prim_func


@intrinsic
def cluster_arrive():
    """Every thread of the block arrives at the cluster's barrier
    (`barrier.cluster.arrive.aligned`, release semantics: its earlier writes,
    shared memory of other blocks included, are seen by the threads that then
    pass T.cluster_wait).

    In a kernel launched with `cluster_dims`, in code every thread runs.

    Example: `T.cluster_arrive()`
    """
    raise outside_prim_func("cluster_arrive")


@intrinsic
def cluster_arrive_relaxed():
    """T.cluster_arrive without release semantics
    (`barrier.cluster.arrive.relaxed.aligned`): it orders nothing, only counts.

    Example: `T.cluster_arrive_relaxed()`
    """
    raise outside_prim_func("cluster_arrive_relaxed")


@intrinsic
def cluster_wait():
    """Waits until every thread of every block of the cluster has arrived
    (T.cluster_arrive) since the last phase (`barrier.cluster.wait.aligned`,
    acquire).

    Example: `T.cluster_wait()`
    """
    raise outside_prim_func("cluster_wait")


@intrinsic
def cluster_sync():
    """T.cluster_arrive then T.cluster_wait: every block of the cluster meets.

    Example: `T.cluster_sync()`
    """
    raise outside_prim_func("cluster_sync")


@intrinsic
def block_rank_in_cluster():
    """The block's rank in its cluster (`%cluster_ctarank`): 0 to the
    cluster's size - 1, x fastest (block (x, y, z) of a cluster of cx x cy
    blocks is x + cx * (y + cy * z)).

    Example: `rank = T.block_rank_in_cluster()`
    """
    raise outside_prim_func("block_rank_in_cluster")
