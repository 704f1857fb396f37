"""The kernel launch and the loops: T.Kernel, T.get_thread_binding, T.Parallel,
T.Pipelined, T.serial, T.unroll, T.vectorized, T.Persistent, and the launch
hints T.use_swizzle and T.annotate_layout."""

from __future__ import annotations

from .intrinsic import intrinsic, outside_prim_func


@intrinsic
def Kernel(*blocks, threads: int | tuple | None = 128, is_cpu: bool = False,
           prelude: str | None = None, cluster_dims=None):
    """Launches the kernel: a grid of 1 to 3 dimensions of thread blocks.

    Used as `with T.Kernel(...) as bx:` (one name gets the block index, or the
    tuple of them) or `as (bx, by):` (one name per grid dimension).

    Args:
        *blocks: the grid sizes, x first (compile-time or run-time integers).
        threads: threads per block, 1 to 1024; a tuple (x, y) or (x, y, z)
            launches x*y*z threads whose per-dimension indices
            T.get_thread_binding(0/1/2) gives (x fastest); None means 128.
        is_cpu: TileLang's CPU target; not supported by tlc (NVIDIA GPUs only).
        prelude: CUDA source put before the kernel; not supported by tlc.
        cluster_dims: launches the grid in clusters of blocks (sm_90a): an
            integer (along x) or a tuple of up to 3, at most 8 blocks in all,
            each dividing the grid's size along its dimension. The blocks of
            a cluster run at once and reach each other's shared memory
            (T.block_rank_in_cluster, T.cluster_sync, T.tma_copy's
            cluster_mask, T.mbarrier_arrive's cta_id); the kernel's end waits
            for the whole cluster, so no block leaves while another may still
            write its shared memory.

    Example: `with T.Kernel(T.ceildiv(N, 128), T.ceildiv(M, 128), threads=128) as (bx, by):`
    """
    raise outside_prim_func("Kernel")


@intrinsic
def get_block_binding(dim: int = 0):
    """The index of the running block along grid dimension `dim`: the value
    `with T.Kernel(...) as (bx, by, bz)` names, for code that does not bind
    them (0 along a dimension T.Kernel did not give).

    Args:
        dim: 0, 1 or 2 (a compile-time integer).

    Example: `row = T.get_block_binding(1) * 64`
    """
    raise outside_prim_func("get_block_binding")


@intrinsic
def disable_warp_group_reg_alloc():
    """Keeps a warp-specialized kernel from moving registers between its
    producer and consumer warpgroups (no `setmaxnreg`): each keeps the
    registers the launch gives every thread. Called once, anywhere in the
    kernel's code (TileLang's spelling; `T.no_set_max_nreg()` too).

    Example: `T.disable_warp_group_reg_alloc()`
    """
    raise outside_prim_func("disable_warp_group_reg_alloc")


@intrinsic
def annotate_min_blocks_per_sm(blocks: int):
    """Asks that `blocks` blocks of the kernel fit on one SM together (PTX's
    `.minnctapersm`, CUDA's second `__launch_bounds__` argument): the
    assembler keeps each thread's registers low enough for it. Called once,
    anywhere in the kernel's code.

    Args:
        blocks: a positive integer.

    Example: `T.annotate_min_blocks_per_sm(2)`
    """
    raise outside_prim_func("annotate_min_blocks_per_sm")


@intrinsic
def no_set_max_nreg():
    """T.disable_warp_group_reg_alloc under TileLang's other name: a warp-specialized
    kernel moves no registers between its warpgroups.

    Example: `T.no_set_max_nreg()`
    """
    raise outside_prim_func("no_set_max_nreg")


@intrinsic
def get_thread_binding(dim: int = 0):
    """The index of the running thread in its block, along dimension `dim`.

    With `threads=N` dimension 0 is the thread's index in [0, N); with
    `threads=(x, y[, z])` dimension 0, 1, 2 are the indices in [0, x), [0, y)
    and [0, z), x fastest (the linear index is tx + x * (ty + y * tz)).
    Valid in the kernel's own code (scalar expressions, `if`s, loop bounds,
    element accesses); not inside T.Parallel, whose iterations the compiler
    assigns to threads itself.

    Args:
        dim: 0, 1 or 2 (a compile-time integer, below the number of thread
            dimensions given to T.Kernel).

    Example: `tx = T.get_thread_binding()`
    """
    raise outside_prim_func("get_thread_binding")


@intrinsic
def thread_binding(start: int, stop: int | None = None, thread: str = "threadIdx.x"):
    """TVM's spelling of the thread index: `tx = T.thread_binding(0, 128,
    thread="threadIdx.x")` (or `for tx in T.thread_binding(...)`, whose body
    runs once in each thread) is T.get_thread_binding(0); threadIdx.y and .z
    are dimensions 1 and 2.

    Args:
        start, stop: the range of the index, `(stop)` or `(0, stop)`; stop must
            be the number of threads T.Kernel gives that dimension.
        thread: "threadIdx.x", "threadIdx.y" or "threadIdx.z".

    Example: `tx = T.thread_binding(0, 256, thread="threadIdx.x")`
    """
    raise outside_prim_func("thread_binding")


@intrinsic
def Parallel(*extents: int, coalesced_width: int | None = None, loop_layout=None,
             prefer_async: bool | None = None, annotations=None):
    """A loop nest over the extents whose iterations the block's threads share.

    Args:
        *extents: one compile-time extent per loop variable.
        coalesced_width: not supported by tlc (it picks each access's vector width).
        loop_layout: not supported by tlc (fragment layouts come from layout inference).
        prefer_async: not supported by tlc (cp.async is used in T.Pipelined loops).
        annotations: TileLang's lowering annotations; not supported by tlc.

    Example: `for i, j in T.Parallel(64, 64): C[i, j] = A[i, j] + B[i, j]`
    """
    raise outside_prim_func("Parallel")


@intrinsic
def Pipelined(start, stop=None, num_stages: int = 2, order=None, stage=None, sync=None,
              group=None, annotations=None, *, step: int = 1, cross_interval=None):
    """A sequential loop whose copies tlc overlaps with compute (software pipelining).

    Takes (stop) or (start, stop), then TileLang's num_stages, order, stage,
    sync, group and annotations in TileLang's order (`T.Pipelined(0, n, 3)`
    is 3 stages); a step only by keyword (`step=2`, tlc's addition).
    TileLang's default depth is 0 (no pipelining); tlc's is 2.

    Args:
        start: the first index, or the stop when it is the only bound.
        stop: the end (excluded).
        num_stages: how many iterations' copies are in flight; 0 gives a plain
            sequential loop; None the default (2, or the depth `stage` gives).
        stage, order, group: TileLang's manual schedule, per scheduled
            statement of the body (scalar binds take no entry; `group`
            gathers statements under one entry): tlc takes the schedules its
            pipeliner runs: global -> shared copies in stage 0, every other
            statement in the last stage (num_stages = max(stage) + 1), the
            computing statements in source order and the copies ordered all
            before them or all after them (each iteration then issues its
            copies ahead after computing); others are an error.
        sync, cross_interval: not supported by tlc (it places the pipeline's
            barriers itself).
        annotations: TileLang's lowering annotations; not supported by tlc.
        step: a positive compile-time step (keyword only).

    A loop whose body holds `with T.ws(...)` bodies is not reordered (they run
    on different warpgroups): num_stages > 1 gives the shared buffers one body
    writes and another uses, and the barriers the loop arrives at, one copy per
    stage, and rewrites the waits' parities (each must flip every iteration,
    `k % 2`), so a producer written for one stage runs up to num_stages
    iterations ahead; 0 or 1, or no num_stages, keep the loop as written.

    Example: `for k in T.Pipelined(T.ceildiv(K, 32), num_stages=3):`
    """
    raise outside_prim_func("Pipelined")


@intrinsic
def serial(start, stop=None, step: int = 1, *, annotations=None):
    """A sequential loop, like `range`: (stop), (start, stop) or (start, stop, step).

    Args:
        start: the first index, or the stop when it is the only bound.
        stop: the end (excluded).
        step: a positive compile-time step.
        annotations: TileLang's lowering annotations; not supported by tlc.

    Example: `for k in T.serial(4): ...`
    """
    raise outside_prim_func("serial")


@intrinsic
def unroll(start, stop=None, step: int = 1, *, explicit: bool = False,
           unroll_factor: int | None = None, annotations=None):
    """A sequential loop unrolled at compile time when its bounds are constants.

    Args:
        start: the first index, or the stop when it is the only bound.
        stop: the end (excluded).
        step: a positive compile-time step.
        explicit: True: unroll at compile time, which needs constant bounds (and
            is what tlc does for those).
        unroll_factor: partial unrolling; not supported by tlc.
        annotations: TileLang's lowering annotations; not supported by tlc.

    Example: `for k in T.unroll(4): acc[k] = 0`
    """
    raise outside_prim_func("unroll")


@intrinsic
def loop_break():
    """TileLang's `break` as a call: leaves the innermost `while` loop or
    run-time T.serial / range loop, as a `break` statement there does.

    Example: `if found: T.loop_break()`
    """
    raise outside_prim_func("loop_break")


@intrinsic
def vectorized(start, stop=None, *, annotations=None):
    """A sequential loop of compile-time bounds, unrolled, for vector accesses.

    Each thread runs every iteration in order (T.unroll's meaning); the
    backend may merge the unrolled iterations' contiguous accesses into
    vector loads and stores.

    Args:
        start: the first index, or the stop when it is the only bound.
        stop: the end (excluded).
        annotations: TileLang's lowering annotations; not supported by tlc.

    Example: `for v in T.vectorized(8): a_local[v] = A[bx * 8 + v]`
    """
    raise outside_prim_func("vectorized")


@intrinsic
def Persistent(domain, wave_size, index, group_size: int = 8):
    """A loop of the block over tiles of `domain`: index, index + wave_size, ...

    Tiles are numbered row-major over the domain, its last dimension padded
    to a multiple of group_size; padded and past-the-end tiles are skipped.
    The loop variables are the tile's coordinates.

    Args:
        domain: the tile counts per dimension (a list; ints or run-time integers).
        wave_size: the tiles done at once by the whole grid (usually its size).
        index: this block's first tile (usually its block index).
        group_size: a positive compile-time integer (clamped to the last extent).

    Example: `for bx, by in T.Persistent([T.ceildiv(M, 128), T.ceildiv(N, 128)], sms, b):`
    """
    raise outside_prim_func("Persistent")


@intrinsic
def use_swizzle(panel_size: int, order: str = "row", enable: bool = True) -> None:
    """Rasterizes the grid's blocks in panels, so neighbouring blocks share L2 data.

    Args:
        panel_size: blocks per panel (positive).
        order: "row" or "col" ("column").
        enable: False leaves the launch order as it is.

    Example: `T.use_swizzle(10)`
    """
    raise outside_prim_func("use_swizzle")


@intrinsic
def annotate_layout(layout_map: dict) -> None:
    """Gives buffers their layouts: {shared buffer: tlc.layout.make_swizzled_layout(buf)}
    or {fragment: T.Fragment(shape, ...)} (which thread and register hold each
    element; on every thread of the block, an affine #tile.layout once inverted).

    Args:
        layout_map: a dict from buffers to layouts.

    Example: `T.annotate_layout({A_s: make_swizzled_layout(A_s),
    acc: T.Fragment(acc.shape, forward_thread_fn=lambda i, j: j * 4 + i // 16)})`
    """
    raise outside_prim_func("annotate_layout")


# TileLang's capitalized aliases ("tile-level loops"): the same intrinsics.
Serial = serial
Unroll = unroll
Vectorized = vectorized
