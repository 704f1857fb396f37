"""Warp-level programming in the kernel's own code (outside T.Parallel,
where every thread runs the statements): the thread's lane, warp and
warpgroup, warp shuffles and votes, and explicit barriers, as TileLang's
builtins.
"""

from __future__ import annotations

from .intrinsic import intrinsic, outside_prim_func

FULL_MASK = 0xFFFFFFFF


@intrinsic
def get_lane_idx(warp_size=None):
    """The running thread's lane: its linear thread index modulo the warp size.

    Args:
        warp_size: the warp size (32, the default, on NVIDIA GPUs; a power of
            two up to 32 for a logical warp).

    Example: `lane = T.get_lane_idx()`
    """
    raise outside_prim_func("get_lane_idx")


@intrinsic
def get_warp_idx(warp_size=None):
    """The running thread's warp: its linear thread index divided by the warp size.

    Args:
        warp_size: the warp size (32, the default).

    Example: `warp = T.get_warp_idx()`
    """
    raise outside_prim_func("get_warp_idx")


@intrinsic
def get_warp_idx_sync(warp_size=None):
    """T.get_warp_idx for a converged warp (the same index in tlc).

    Args:
        warp_size: the warp size (32, the default).

    Example: `warp = T.get_warp_idx_sync()`
    """
    raise outside_prim_func("get_warp_idx_sync")


@intrinsic
def get_warp_group_idx(warp_size=None, warps_per_group=None):
    """The running thread's warpgroup: its linear thread index divided by
    warp_size * warps_per_group.

    Args:
        warp_size: the warp size (32, the default).
        warps_per_group: warps per group (4, the default: Hopper's warpgroup).

    Example: `wg = T.get_warp_group_idx()`
    """
    raise outside_prim_func("get_warp_group_idx")


@intrinsic
def shfl_xor(value, delta, width=32, mask=FULL_MASK):
    """The `value` of lane (lane ^ delta) within the lane's group of `width`
    lanes (`__shfl_xor_sync`); every lane of the warp must run it.

    Args:
        value: a scalar of 32 bits or fewer (float16/bfloat16 and narrower
            integers travel widened).
        delta: the XOR mask of lanes (an int or a run-time value).
        width: the group of lanes, a power of two up to 32.
        mask: the lanes taking part: all 32 (0xFFFFFFFF) only.

    Example: `s = s + T.shfl_xor(s, 16)`
    """
    raise outside_prim_func("shfl_xor")


@intrinsic
def shfl_down(value, delta, width=32, mask=FULL_MASK):
    """The `value` of lane (lane + delta) within the lane's group of `width`
    lanes, or the lane's own past the group's end (`__shfl_down_sync`).

    Args:
        value: a scalar of 32 bits or fewer.
        delta: how many lanes down.
        width: the group of lanes, a power of two up to 32.
        mask: the lanes taking part: all 32 (0xFFFFFFFF) only.

    Example: `s = s + T.shfl_down(s, 1)`
    """
    raise outside_prim_func("shfl_down")


@intrinsic
def shfl_up(value, delta, width=32, mask=FULL_MASK):
    """The `value` of lane (lane - delta) within the lane's group of `width`
    lanes, or the lane's own before the group's start (`__shfl_up_sync`).

    Args:
        value: a scalar of 32 bits or fewer.
        delta: how many lanes up.
        width: the group of lanes, a power of two up to 32.
        mask: the lanes taking part: all 32 (0xFFFFFFFF) only.

    Example: `prefix = prefix + T.shfl_up(prefix, 1)`
    """
    raise outside_prim_func("shfl_up")


@intrinsic
def shfl_sync(value, srcLane, width=32, mask=FULL_MASK):  # noqa: N803 (TileLang's name)
    """The `value` of lane `srcLane` of the lane's group of `width` lanes
    (`__shfl_sync`).

    Args:
        value: a scalar of 32 bits or fewer.
        srcLane: the lane read, within the group.
        width: the group of lanes, a power of two up to 32.
        mask: the lanes taking part: all 32 (0xFFFFFFFF) only.

    Example: `first = T.shfl_sync(v, 0)`
    """
    raise outside_prim_func("shfl_sync")


@intrinsic
def any_sync(predicate, mask=FULL_MASK):
    """1 (int32) in every lane of the warp if `predicate` is non-zero in any
    of its lanes, else 0 (`__any_sync`); every lane of the warp must run it.

    Args:
        predicate: an integer or bool scalar.
        mask: the lanes taking part: all 32 (0xFFFFFFFF) only.

    Example: `if T.any_sync(x > limit): ...`
    """
    raise outside_prim_func("any_sync")


@intrinsic
def all_sync(predicate, mask=FULL_MASK):
    """1 (int32) in every lane of the warp if `predicate` is non-zero in all
    of its lanes, else 0 (`__all_sync`); every lane of the warp must run it.

    Args:
        predicate: an integer or bool scalar.
        mask: the lanes taking part: all 32 (0xFFFFFFFF) only.

    Example: `done = T.all_sync(remaining == 0)`
    """
    raise outside_prim_func("all_sync")


@intrinsic
def ballot_sync(predicate, mask=FULL_MASK):
    """A uint64 whose bit n is set where lane n's `predicate` is non-zero
    (`__ballot_sync`, zero-extended: the upper 32 bits are 0); every lane
    of the warp must run it.

    Args:
        predicate: an integer or bool scalar.
        mask: the lanes taking part: all 32 (0xFFFFFFFF) only.

    Example: `below = T.ballot_sync(x < pivot)`
    """
    raise outside_prim_func("ballot_sync")


@intrinsic
def ballot(predicate):
    """T.ballot_sync over the whole warp: a uint64 with bit n set where lane
    n's `predicate` is non-zero.

    Args:
        predicate: an integer or bool scalar.

    Example: `bits = T.ballot(flag)`
    """
    raise outside_prim_func("ballot")


@intrinsic
def activemask():
    """A uint64 with bit n set for each lane of the warp running this
    statement (`__activemask`, zero-extended), also under an `if` that only
    some lanes take.

    Example: `lanes = T.activemask()`
    """
    raise outside_prim_func("activemask")


@intrinsic
def sync_threads(barrier_id=None, arrive_count=None):
    """A barrier of the block's threads (`__syncthreads`), or of `arrive_count`
    threads on named barrier `barrier_id` (`bar.sync id, count`). tlc places
    the barriers its own shared-memory accesses need; this one is the
    program's (every thread, or every thread counted, must reach it).

    Args:
        barrier_id: a named barrier, 1 to 15 (0 is the block's), with
            arrive_count; 9 to 15 are those hardware barriers, 1 to 8 (which
            the compiler keeps for warpgroups) the program's names for free
            ones, the same within a kernel.
        arrive_count: the threads that meet there, a multiple of 32.

    Example: `T.sync_threads()`
    """
    raise outside_prim_func("sync_threads")


@intrinsic
def syncthreads_count(predicate):
    """A barrier of the block's threads that also counts the threads whose
    `predicate` is true (`__syncthreads_count`: PTX `bar.red.popc`); every
    thread gets the count.

    Args:
        predicate: an integer or bool scalar.

    Example: `alive = T.syncthreads_count(x > 0)`
    """
    raise outside_prim_func("syncthreads_count")


@intrinsic
def sync_grid():
    """A barrier of every thread of every block of the grid (CUDA's
    `grid.sync()`): what any block wrote before it is visible to every block
    after it. The kernel is launched cooperatively (all its blocks resident at
    once; a grid too large for the device is a launch error, not a hang), and
    a zero-filled counter in global memory, allocated at each call, counts the
    blocks in. Every thread must reach it. The interpreter runs the kernel in
    phases split at these barriers, in its own code and in its serial loops
    (one under a condition: an error there).

    Example: `T.sync_grid()` between a persistent kernel's split phase and its
    combine phase.
    """
    raise outside_prim_func("sync_grid")


@intrinsic
def syncthreads_and(predicate):
    """A block barrier returning 1 where `predicate` is true in every thread,
    else 0 (`__syncthreads_and`: PTX `bar.red.and`).

    Args:
        predicate: an integer or bool scalar.

    Example: `done = T.syncthreads_and(finished)`
    """
    raise outside_prim_func("syncthreads_and")


@intrinsic
def syncthreads_or(predicate):
    """A block barrier returning 1 where `predicate` is true in some thread,
    else 0 (`__syncthreads_or`: PTX `bar.red.or`).

    Args:
        predicate: an integer or bool scalar.

    Example: `found = T.syncthreads_or(hit)`
    """
    raise outside_prim_func("syncthreads_or")


@intrinsic
def sync_warp(mask=None):
    """A barrier of the warp's lanes (`__syncwarp`).

    Args:
        mask: the lanes taking part: all 32 (None or 0xFFFFFFFF) only.

    Example: `T.sync_warp()`
    """
    raise outside_prim_func("sync_warp")


@intrinsic
def named_barrier_arrive(barrier_id, thread_count):
    """Arrives at named barrier `barrier_id` without waiting (`bar.arrive`):
    the other side waits for it with T.sync_threads(barrier_id, thread_count),
    as a producer warpgroup signals consumers.

    Args:
        barrier_id: the named barrier, 1 to 15, as T.sync_threads takes it.
        thread_count: the threads that meet there, arriving and waiting
            together, a multiple of 32.

    Example: `T.named_barrier_arrive(9, 256)`
    """
    raise outside_prim_func("named_barrier_arrive")


@intrinsic
def tvm_warp_shuffle(mask, value, lane, width, warp_size):
    """TVM's spelling of T.shfl_sync: the `value` of lane `lane` of the lane's group of
    `width` lanes.

    Args:
        mask: the lanes taking part: all 32 (0xFFFFFFFF) only.
        value: a scalar of 32 bits or fewer.
        lane: the lane read, within the group.
        width: the group of lanes, a power of two up to 32.
        warp_size: TVM's logical warp size, a power of two up to 32 (CUDA's
            __shfl_sync, which TVM lowers this to, has no such operand: checked only).

    Example: `other = T.tvm_warp_shuffle(0xFFFFFFFF, v, lane ^ 1, 32, 32)`
    """
    raise outside_prim_func("tvm_warp_shuffle")


def _warp_reduce_doc(name: str, what: str):
    def stub(value):
        raise outside_prim_func(f"warp_reduce_{name}")

    stub.__name__ = stub.__qualname__ = f"warp_reduce_{name}"
    stub.__doc__ = f"""The {what} of `value` over the 32 lanes of the warp, in every lane
    (butterfly shuffles: `__shfl_xor_sync` by 16, 8, 4, 2, 1); every lane of the
    warp must run it.

    Args:
        value: a scalar of 32 bits or fewer (float16/bfloat16 and narrower
            integers combine widened).

    Example: `total = T.warp_reduce_{name}(partial)`
    """
    return intrinsic(stub)


warp_reduce_sum = _warp_reduce_doc("sum", "sum")
warp_reduce_max = _warp_reduce_doc("max", "maximum")
warp_reduce_min = _warp_reduce_doc("min", "minimum")
warp_reduce_bitand = _warp_reduce_doc("bitand", "bitwise AND")
warp_reduce_bitor = _warp_reduce_doc("bitor", "bitwise OR")
