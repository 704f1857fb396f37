"""The tile language, TileLang-style: `import tlc.language as T`.

Everything here is either a compile-time value (dtypes, tensor annotations,
symbolic sizes, warp policies) or an intrinsic that only has meaning inside a
`@T.prim_func`: the frontend reads the function's source and builds tile IR
for each intrinsic call it meets. Called from ordinary Python, an intrinsic
raises an error saying so.
"""

from __future__ import annotations

from .loops import (Kernel, Parallel, Persistent, Pipelined, Serial, Unroll, Vectorized,
                    annotate_layout, annotate_min_blocks_per_sm, disable_warp_group_reg_alloc,
                    get_block_binding,
                    get_thread_binding, loop_break, no_set_max_nreg, serial, thread_binding,
                    unroll, use_swizzle, vectorized)
from .debug import assume, device_assert, print  # noqa: A004 (TileLang's T.print)
from .memory import (alloc_buffer, alloc_fragment, alloc_global, alloc_local, alloc_reducer,
                     alloc_shared, alloc_var, atomic_add, atomic_addx2, atomic_addx4, atomic_load, atomic_max,
                     atomic_min, atomic_store,
                     c2d_im2col, clear, copy, fill,
                     finalize_reducer, im2col, make_tensor, reshape, transpose, view)
from .policy import GemmWarpPolicy
from .scalar_math import (
    Cast,
    abs,  # noqa: A004
    cast,
    ceil,
    ceildiv,
    clamp,
    cos,
    exp,
    exp2,
    floor,
    floordiv,
    floormod,
    align_up,
    any_of,
    all_of,
    if_then_else,
    infinity,
    log,
    log2,
    max,  # noqa: A004
    min,  # noqa: A004
    reinterpret,
    rsqrt,
    shift_left,
    shift_right,
    sigmoid,
    sin,
    sqrt,
)
from .cluster import (block_rank_in_cluster, cluster_arrive, cluster_arrive_relaxed,
                      cluster_sync, cluster_wait)
from .warp import (activemask, all_sync, any_sync, ballot, ballot_sync, get_lane_idx,
                   get_warp_group_idx, get_warp_idx, get_warp_idx_sync, named_barrier_arrive,
                   shfl_down, shfl_sync, shfl_up, shfl_xor, sync_threads, sync_warp,
                   sync_grid, syncthreads_and, syncthreads_count, syncthreads_or,
                   tvm_warp_shuffle, warp_reduce_bitand, warp_reduce_bitor, warp_reduce_max,
                   warp_reduce_min, warp_reduce_sum)
from .warp_specialize import (access_ptr, alloc_barrier, barrier_arrive, barrier_wait,
                              cp_async_barrier_noinc, dec_max_nreg, inc_max_nreg,
                              mbarrier_arrive, mbarrier_wait_parity, ptx_cp_async,
                              set_max_nreg, tma_copy, ws)
from .tile_ops import (cummax, cumsum, gemm, reduce_abssum, reduce_absmax, reduce_max, reduce_min,
                       reduce_sum, wait_wgmma, wgmma_gemm)
from .types import (
    StridedTensor,
    Tensor,
    Buffer,
    SharedBuffer,
    FragmentBuffer,
    LocalBuffer,
    SymbolicDim,
    dtype,
    dynamic,
    symbolic,
    bfloat16,
    bool,  # noqa: A004
    float,  # noqa: A004
    float8_e4m3,
    float8_e4m3fn,
    float8_e5m2,
    float16,
    float32,
    float64,
    tfloat32,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
    ptr,
)

from ..frontend.prim_func import macro, prim_func  # noqa: E402

Select = if_then_else  # TVM's name (tirx.Select)


def __getattr__(name: str):
    """T.Fragment (tlc.layout.Fragment), imported when first used: tlc.layout
    needs numpy, which a compile does not otherwise load."""
    if name == "Fragment":
        from ..layout.fragment import Fragment

        return Fragment
    if name == "Layout":
        from ..layout.index_map import Layout

        return Layout
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def const(names: str):
    """`M, N = T.const("M, N")`: sizes of an eager @tlc.jit kernel, taken from
    its tensor arguments' shapes (see tlc.eager); only valid there."""
    raise RuntimeError("T.const declares sizes in the body of an eager-style @tlc.jit kernel "
                       "(one whose body has the `with T.Kernel(...)`); it is not run as Python")


def empty(shape, dtype: str = "float32"):
    """`C = T.empty((M, N), "float16")`: an output of an eager @tlc.jit kernel,
    allocated at each call and returned (see tlc.eager); only valid there."""
    raise RuntimeError("T.empty declares an output in the body of an eager-style @tlc.jit "
                       "kernel (one whose body has the `with T.Kernel(...)`); it is not run as "
                       "Python")

# The T. intrinsics, in the order of the families above.
INTRINSICS = [
    "block_rank_in_cluster", "cluster_arrive", "cluster_arrive_relaxed", "cluster_sync",
    "cluster_wait",
    "Kernel", "get_thread_binding", "get_block_binding", "thread_binding",
    "disable_warp_group_reg_alloc", "no_set_max_nreg", "annotate_min_blocks_per_sm",
    "Parallel", "Pipelined", "serial", "unroll", "vectorized",
    "loop_break",
    "Persistent", "use_swizzle", "annotate_layout",
    "alloc_shared", "alloc_fragment", "alloc_local", "alloc_var", "alloc_global", "alloc_buffer",
    "device_assert", "assume",
    "alloc_reducer", "finalize_reducer", "reshape", "view", "make_tensor", "transpose", "copy", "fill", "clear", "c2d_im2col",
    "im2col",
    "atomic_add", "atomic_addx2", "atomic_addx4", "atomic_max", "atomic_min", "atomic_load",
    "atomic_store", "print",
    "get_lane_idx", "get_warp_idx", "get_warp_idx_sync", "get_warp_group_idx", "shfl_xor",
    "shfl_down", "shfl_up", "shfl_sync", "tvm_warp_shuffle", "warp_reduce_sum", "warp_reduce_max",
    "warp_reduce_min", "warp_reduce_bitand", "warp_reduce_bitor", "any_sync", "all_sync", "ballot_sync", "ballot",
    "activemask", "sync_threads", "sync_warp", "named_barrier_arrive", "syncthreads_count",
    "sync_grid", "syncthreads_and", "syncthreads_or",
    "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sigmoid", "abs", "max", "min", "if_then_else",
    "reinterpret",
    "infinity", "cast", "Cast", "clamp", "ceildiv", "floordiv", "floormod", "align_up", "sin",
    "cos", "ceil", "any_of", "all_of",
    "floor", "shift_left", "shift_right",
    "gemm", "wgmma_gemm", "wait_wgmma", "reduce_max", "reduce_min", "reduce_sum",
    "reduce_abssum", "reduce_absmax", "cumsum", "cummax",
    "ws", "alloc_barrier", "barrier_wait", "barrier_arrive", "mbarrier_wait_parity",
    "mbarrier_arrive", "tma_copy", "set_max_nreg", "inc_max_nreg", "dec_max_nreg",
    "access_ptr", "ptx_cp_async", "cp_async_barrier_noinc",
]

# TileLang's other names for some of them: the same functions.
ALIASES = {"Serial": "serial", "Unroll": "unroll", "Vectorized": "vectorized",
           "Select": "if_then_else"}

__all__ = [
    "Buffer", "SharedBuffer", "FragmentBuffer", "LocalBuffer", "Fragment", "GemmWarpPolicy",
    "Layout", "StridedTensor", "SymbolicDim", "Tensor", "const", "dtype",
    "dynamic", "empty",
    "prim_func", "macro", "symbolic", "bfloat16", "bool", "float", "float8_e4m3",
    "float8_e4m3fn", "float8_e5m2",
    "float16", "float32", "float64", "tfloat32", "int8", "int16", "int32", "int64", "uint8",
    "uint16", "uint32", "uint64", "ptr",
    *INTRINSICS, *ALIASES,
]
