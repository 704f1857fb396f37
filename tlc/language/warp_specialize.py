"""Hand-written warp specialization: T.ws runs code on some warpgroups of the
block, T.alloc_barrier gives the program mbarriers of its own, and
T.barrier_wait / T.barrier_arrive (T.mbarrier_wait_parity / T.mbarrier_arrive)
synchronise the warpgroups through them.

Without any of these the compiler specializes a T.Pipelined loop of TMA
copies and wgmma gemms by itself (sm_90a); these are for programs that lay
out the producer and the consumers themselves.
"""

from __future__ import annotations

from .intrinsic import intrinsic, outside_prim_func


@intrinsic
def ws(*warp_group_idx: int):
    """Runs the body on the listed warpgroups only: `with T.ws(1):`.

    Warpgroup w is the block's threads 128*w to 128*w + 127; `T.ws(0, 1)`
    runs on the first 256 threads. Inside, the tile operations run as if the
    block were those threads: a fragment the body uses is spread over them
    (every use of a fragment must be in T.ws bodies of the same warpgroups),
    a T.gemm splits its warps among them, and the barriers the compiler
    inserts there are named barriers of those threads. Between bodies of
    other warpgroups, the program orders conflicting shared-memory accesses
    itself, with T.alloc_barrier barriers; a kernel without any gets a block
    barrier between them.

    Args:
        *warp_group_idx: compile-time warpgroup indices, ascending and
            contiguous; the block's threads must be a multiple of 128.

    Example: `with T.ws(1): T.gemm(A_shared, B_shared, C_local)`
    """
    raise outside_prim_func("ws")


@intrinsic
def alloc_barrier(arrive_count):
    """Allocates mbarriers in shared memory: one per arrival count.

    Barrier i completes a phase when `arrive_count[i]` threads have arrived
    (T.barrier_arrive, once per thread that runs it); its first phase has
    parity 0. The barriers are initialised where the kernel starts, before
    any thread can use them, and keep their bytes for the whole kernel.

    Args:
        arrive_count: a compile-time integer (one barrier, used by name) or a
            list of them (several, used as `bars[i]`), each in [1, 1048575].

    Example: `data_ready = T.alloc_barrier(arrive_count=128)`
    """
    raise outside_prim_func("alloc_barrier")


@intrinsic
def barrier_wait(mbarrier, parity):
    """Waits until the phase of `mbarrier` with parity `parity % 2` completed.

    Waiting for parity 1 before the barrier's first phase completed returns
    at once (a producer's first wait on an "empty" barrier). Afterwards the
    thread sees the shared-memory writes the arriving threads made before
    they arrived.

    Args:
        mbarrier: a barrier of T.alloc_barrier: its name (one barrier) or
            `bars[i]` (i a compile-time or run-time integer).
        parity: an integer; its low bit is the parity waited for.

    Example: `T.barrier_wait(data_ready, ko % 2)`
    """
    raise outside_prim_func("barrier_wait")


@intrinsic
def barrier_arrive(mbarrier):
    """Every thread that runs it arrives once at `mbarrier`.

    The thread's earlier shared-memory writes are released to the threads
    that then wait for the phase (and fenced for the tensor cores and TMA,
    which read shared memory through the async proxy).

    Args:
        mbarrier: a barrier of T.alloc_barrier: its name or `bars[i]`.

    Example: `T.barrier_arrive(compute_done)`
    """
    raise outside_prim_func("barrier_arrive")


@intrinsic
def mbarrier_wait_parity(mbarrier, parity):
    """T.barrier_wait under TileLang's other name: waits until the phase of
    `mbarrier` with parity `parity % 2` completed.

    Args:
        mbarrier: a barrier of T.alloc_barrier: its name or `bars[i]`.
        parity: an integer; its low bit is the parity waited for.

    Example: `T.mbarrier_wait_parity(bars[ko % 2], (ko // 2) % 2)`
    """
    raise outside_prim_func("mbarrier_wait_parity")


@intrinsic
def mbarrier_arrive(mbarrier, cta_id=None):
    """T.barrier_arrive under TileLang's other name: every thread that runs it
    arrives once at `mbarrier`.

    Args:
        mbarrier: a barrier of T.alloc_barrier: its name or `bars[i]`.
        cta_id: arrive at barrier `mbarrier` of that block of the cluster
            instead (a kernel with `cluster_dims`; `mapa`, then a release at
            cluster scope): a multicast's consumers releasing a stage to the
            block that refills it. None (the default) is this block.

    Example: `T.mbarrier_arrive(bars[ko % 2])`
    """
    raise outside_prim_func("mbarrier_arrive")


@intrinsic
def tma_copy(src, dst, *, barrier=None, cluster_mask=None, leader_scope_threads=None,
             eviction_policy=None, annotations=None):
    """Loads a global tile into shared memory by TMA, completing on `barrier`.

    In a T.ws body (a producer's), followed in that body by the body's
    T.barrier_arrive / T.mbarrier_arrive on the same barrier: one thread
    issues the load and arrives expecting its bytes, so the barrier's phase
    completes once the tile has landed; a thread waiting for the phase then
    reads it. sm_90a; the tile is a whole 2-d shared buffer (or a stage of
    one, `A_s[k % 2, :, :]`) of 128-byte rows (or of 64- or 32-byte rows),
    from a tensor TMA can map, in the tensor's dtype; anything else is an
    error, never a silent thread copy.

    Args:
        src: the global region read (a tile origin or slices, as T.copy's).
        dst: the shared buffer (or stage) written, whole.
        barrier: the barrier of T.alloc_barrier the load completes on.
        cluster_mask: a compile-time bit mask of blocks of the cluster (a kernel
            with `cluster_dims`): each of them expects the tile's bytes on its
            own `barrier`, and the lowest issues one multicast load into all of
            them (a block outside the mask loads its own). Every block of the
            mask must have released the buffer before it is refilled
            (T.mbarrier_arrive's cta_id).
        leader_scope_threads: not supported by tlc (the body's first thread issues).
        eviction_policy: cache eviction hints; not supported by tlc.
        annotations: TileLang's lowering annotations; not supported by tlc.

    Example: `T.tma_copy(A[by * 128, k * 64], A_s[k % 2, :, :], barrier=full[k % 2])`
    """
    raise outside_prim_func("tma_copy")


@intrinsic
def set_max_nreg(reg_count: int, is_inc: int):
    """Moves the registers of the running warpgroup (`setmaxnreg`, sm_90a).

    In a T.ws body, which each of its warpgroups runs whole: `is_inc` 1
    raises the warpgroup's per-thread registers to `reg_count` (a consumer
    taking the producer's), 0 lowers them (a producer giving them up). A
    block of n threads starts with 65536 / n registers a thread (rounded
    down to a multiple of 8), so this needs n >= 384 (with fewer a thread
    may use 255 from the start and ptxas ignores setmaxnreg: an error), a
    raise to at least that count and a cut to at most it. The counts the
    warpgroups end with must fit in the block's (e.g. 240 + 208 + 56 =
    3 x 168 at 384 threads; an error otherwise: a raise the others' cuts do
    not pay for would wait forever on the GPU). Give every warpgroup its
    count: ptxas may drop them all when one has none.

    Args:
        reg_count: a compile-time multiple of 8 in [24, 256].
        is_inc: 1 to raise the count, 0 to lower it (compile-time).

    Example: `T.set_max_nreg(240, 1)`
    """
    raise outside_prim_func("set_max_nreg")


@intrinsic
def inc_max_nreg(reg_count: int):
    """T.set_max_nreg(reg_count, 1): raises the warpgroup's registers.

    Args:
        reg_count: a compile-time multiple of 8 in [24, 256].

    Example: `T.inc_max_nreg(240)`
    """
    raise outside_prim_func("inc_max_nreg")


@intrinsic
def dec_max_nreg(reg_count: int):
    """T.set_max_nreg(reg_count, 0): lowers the warpgroup's registers.

    Args:
        reg_count: a compile-time multiple of 8 in [24, 256].

    Example: `T.dec_max_nreg(40)`
    """
    raise outside_prim_func("dec_max_nreg")


@intrinsic
def access_ptr(base, access_type="r", *extents, offset=0, extent=None, ignore_last_ndim=0):
    """The address of a buffer element, for T.ptx_cp_async: `T.access_ptr(A[i, j], "r", 8)`.

    In tlc such an address is only T.ptx_cp_async's operand (a copy of
    consecutive elements along the last dimension from it), not a value of
    its own.

    Args:
        base: an element of a shared buffer or a global tensor (`A[i, j]`).
        access_type: "r", "w" or "rw" (or 1, 2, 3): reads through a "w"-only
            pointer, or writes through an "r"-only one, are errors.
        *extents: how many elements from `base` may be accessed (their
            product; compile-time).
        offset: an extra element offset; only 0 in tlc.
        extent: the elements that may be accessed, overriding `*extents`.
        ignore_last_ndim: only 0 in tlc.

    Example: `T.access_ptr(KV_s[stage, row, col], "w", 8)`
    """
    raise outside_prim_func("access_ptr")


@intrinsic
def ptx_cp_async(dst_access_ptr, src_access_ptr, num_elems, predicate=None):
    """Copies `num_elems` consecutive elements (4, 8 or 16 bytes) from global
    memory to shared memory, in the thread that runs it: TileLang's
    per-thread `cp.async`.

    tlc copies them when the call runs (a load and a store of the thread's
    own), so the data is in shared memory once the thread goes on; a later
    T.cp_async_barrier_noinc then only arrives. Where `predicate` is false
    the destination is filled with zeros, as cp.async's source size 0 does.

    Args:
        dst_access_ptr: T.access_ptr of a shared-buffer element ("w").
        src_access_ptr: T.access_ptr of a global-tensor element ("r"), of the
            same dtype.
        num_elems: a compile-time count; times the element size, 4, 8 or 16
            bytes, within both pointers' extents.
        predicate: an optional run-time condition.

    Example: `T.ptx_cp_async(T.access_ptr(S[r, c], "w", 8), T.access_ptr(G[i, c], "r", 8), 8)`
    """
    raise outside_prim_func("ptx_cp_async")


@intrinsic
def cp_async_barrier_noinc(barrier):
    """Arrives at `barrier` once the thread's earlier T.ptx_cp_async copies
    are in shared memory (`cp.async.mbarrier.arrive.noinc`: the barrier's
    count includes the arrival). tlc's copies are complete when they
    return, so this is the thread's arrival (T.barrier_arrive).

    Args:
        barrier: a barrier of T.alloc_barrier: its name or `bars[i]`.

    Example: `T.cp_async_barrier_noinc(bar_k_ready[stage])`
    """
    raise outside_prim_func("cp_async_barrier_noinc")
