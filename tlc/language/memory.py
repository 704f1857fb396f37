"""Buffers, scalar variables and data movement: T.alloc_shared,
T.alloc_fragment, T.alloc_local, T.alloc_var, T.alloc_global,
T.alloc_reducer, T.finalize_reducer, T.reshape, T.view, T.copy, T.fill,
T.clear, T.c2d_im2col (T.im2col)."""

from __future__ import annotations

from .intrinsic import intrinsic, outside_prim_func
from .types import Buffer


@intrinsic
def alloc_shared(shape: int | tuple, dtype: str = "float32", scope: str = "shared.dyn") -> Buffer:
    """A buffer in the block's shared memory.

    Args:
        shape: the static shape (an int for one dimension, or a tuple of ints).
        dtype: the element type ("float16", T.float16, ...).
        scope: "shared.dyn" or "shared" (both are shared memory in tlc).

    Example: `A_s = T.alloc_shared((128, 32), "float16")`
    """
    raise outside_prim_func("alloc_shared")


@intrinsic
def alloc_fragment(shape: int | tuple, dtype: str = "float32",
                   scope: str = "local.fragment") -> Buffer:
    """A buffer spread over the block's registers; layout inference picks how.

    Args:
        shape: the static shape of the whole tile.
        dtype: the element type.
        scope: "local.fragment" (the only one a fragment has).

    Example: `C_f = T.alloc_fragment((128, 128), "float32")`
    """
    raise outside_prim_func("alloc_fragment")


@intrinsic
def alloc_local(shape: int | tuple, dtype: str = "float32", scope: str = "local") -> Buffer:
    """A buffer private to each thread (registers).

    Args:
        shape: the static shape.
        dtype: the element type.
        scope: "local" (the only one a local buffer has).

    Example: `acc = T.alloc_local((1,), "float32")`
    """
    raise outside_prim_func("alloc_local")



@intrinsic
def alloc_buffer(shape: int | tuple, dtype: str = "float32", data=None, strides=None,
                 elem_offset=None, scope: str = "global", align: int = -1,
                 offset_factor: int = 0, buffer_type: str = "default", axis_separators=None,
                 annotations=None) -> Buffer:
    """TVM's buffer allocation, by `scope`: "global" is T.alloc_global (at the prim_func's
    top level), "shared" / "shared.dyn" T.alloc_shared, "local.fragment" T.alloc_fragment,
    "local" T.alloc_local. `data`, `strides`, `elem_offset`, `align`, `offset_factor`,
    `buffer_type`, `axis_separators`, `annotations`: not supported (errors).

    Args:
        shape: the buffer's sizes.
        dtype: its element type.
        data: not supported (a buffer over other data is a view: T.view).
        strides: not supported.
        elem_offset: not supported.
        scope: where it lives (above).
        align: not supported.
        offset_factor: not supported.
        buffer_type: not supported.
        axis_separators: not supported.
        annotations: not supported.

    Example: `partial = T.alloc_buffer([split, M, N], "float32")`
    """
    raise outside_prim_func("alloc_buffer")


@intrinsic
def alloc_global(shape: int | tuple, dtype: str = "float32", scope: str = "global") -> Buffer:
    """A global-memory scratch tensor shared by the prim_func's kernels.

    Only at the prim_func's top level, outside `with T.Kernel(...)`. Every
    kernel uses it as it uses a tensor parameter (element loads and stores,
    T.copy, T.atomic_add); the kernels run in source order on one stream, so
    a kernel sees what the kernels before it wrote. The launcher allocates it
    at each call (the caller never passes it); its contents are undefined
    when the call starts (NaN-filled floats under the interpreter).

    Args:
        shape: ints and T.dynamic sizes of the tensor parameters (sized from
            the arguments at each call).
        dtype: the element type.
        scope: "global" (TileLang's only scope for it).

    Example: `partial = T.alloc_global((splits, M, N), "float32")`
    """
    raise outside_prim_func("alloc_global")


@intrinsic
def reshape(src: Buffer, shape: int | tuple) -> Buffer:
    """Another shape for a buffer's memory (no copy): what is written through
    either name is read through the other.

    Of a tensor parameter (or a view of one): a view of its memory, as
    `T.Tensor(shape, src.dtype, src.data)`. Of a shared buffer: its bytes, in
    the row-major order of its own elements, addressed row-major with the new
    shape, wherever the compiler's layout of the buffer (a gemm operand's
    swizzle) puts them, so a gemm operand's bytes may be reused as scratch of
    another type; a buffer with stages or a T.annotate_layout cannot be
    viewed. Of a fragment: its registers indexed row-major with the
    new shape (the compiler places the fragment, whichever name a loop or
    reduction uses). Local buffers and reducers: not supported.

    Args:
        src: the buffer.
        shape: as many elements as `src` (ints; a tensor's view may use
            T.dynamic sizes, checked at the call).

    Example: `flat = T.reshape(A_shared, (block_M * block_K,))`,
    `per_head = T.reshape(scores, (block_N, block_Q, heads))`
    """
    raise outside_prim_func("reshape")


@intrinsic
def view(src: Buffer, shape: int | tuple | None = None, dtype: str | None = None) -> Buffer:
    """Another shape and/or element type for a buffer's bytes (no copy), as
    T.reshape, the byte size kept.

    Args:
        src: a tensor parameter (or a view of one), a shared buffer or a
            fragment.
        shape: the new shape (default: `src`'s).
        dtype: the new element type (default: `src`'s; a fragment's view
            keeps it).

    Example: `words = T.view(KV_shared, (64, 256), "float32")` (a 64 x 512
    float16 buffer's bytes as float32)
    """
    raise outside_prim_func("view")


@intrinsic
def make_tensor(ptr, shape: int | tuple, dtype: str = "float32", strides=None) -> Buffer:
    """A global tensor at an address read at run time: an entry of a pointer
    table (`T.Tensor([G], T.ptr)`) or a `T.ptr` parameter, as grouped GEMMs
    pass one tensor per group.

    The tensor is row-major and contiguous, its first element at `ptr`, which
    must be 16-byte aligned (as tensor parameters are). It is read and written
    like a tensor parameter (element accesses, T.copy, atomics), but not
    through TMA: its tensor map would have to be encoded on the host.

    Args:
        ptr: the address, a 64-bit integer (T.ptr) value.
        shape: ints, or sizes read at run time.
        dtype: the element type.
        strides: not supported (the tensor is contiguous): must be None.

    Example: `A = T.make_tensor(A_ptrs[g], (max_M, K), T.float16)`
    """
    raise outside_prim_func("make_tensor")


@intrinsic
def alloc_var(dtype: str, *args, scope: str = "local.var", init=None):
    """A scalar variable private to each thread (a register), read and
    assigned by name.

    `x = v`, `x += v`, ... store into it (the value converted to its dtype, as
    any store converts); reading `x` loads it; `x[0]` is the same element.
    It holds zero until assigned, unless `init` gives another first value.

    Args:
        dtype: the element type ("float32", T.int32, ...).
        args: TileLang's positional forms: `(init)`, `(scope)` (a string) or
            `(init, scope)`.
        scope: "local.var" (the only one a variable has).
        init: the first value (a number or a run-time scalar), stored where
            the variable is declared.

    Example: `acc = T.alloc_var("float32", init=0.0)`
    """
    raise outside_prim_func("alloc_var")


@intrinsic
def alloc_reducer(shape: int | tuple, dtype: str = "float32", op: str = "sum",
                  replication: str | None = None) -> Buffer:
    """A fragment that T.Parallel loops reduce into, each thread keeping its
    own partial results until T.finalize_reducer combines them.

    Between `T.fill(R, init)` (or `T.clear(R)`) and `T.finalize_reducer(R)`,
    the loops update it only as `R[i] += v` (op "sum"), `R[i] = T.max(R[i], v)`
    ("max") or `R[i] = T.min(R[i], v)` ("min"), at any index, from any
    iteration; reading or copying it then is an error. After the finalize
    every thread holds all of R: it is read anywhere, in T.Parallel or not.
    A "sum" reducer starts at 0; "max" and "min" take part with their fill
    value (T.fill(R, 0) then max: the result is at least 0).

    Args:
        shape: the static shape of the result.
        dtype: float16, bfloat16, float32, int8/16/32 or uint8/16/32.
        op: "sum", "max" or "min".
        replication: "all" or None (every thread keeps a partial copy of the
            whole reducer); "none" (an element per thread, the loops laid out
            by it) is not supported.

    Example: `s = T.alloc_reducer((1,), "float32", op="sum", replication="all")`
    """
    raise outside_prim_func("alloc_reducer")


@intrinsic
def finalize_reducer(reducer, dst=None, batch: int = 1, annotations=None) -> None:
    """Combines the threads' partial results of a T.alloc_reducer (warp
    shuffles, then shared memory across warps); afterwards every thread holds
    the whole result, in the reducer or (TileLang's newer form) in `dst`.

    Args:
        reducer: the T.alloc_reducer buffer, filled (T.fill / T.clear) and
            updated in T.Parallel loops since.
        dst: a fragment, shared or local buffer of the reducer's shape that
            receives the result (converted to its dtype); None: the reducer.
        batch: TileLang's outputs per batched all-reduce, a tuning knob: 1
            only.
        annotations: TileLang's lowering annotations; not supported by tlc.

    Example: `T.finalize_reducer(s)`
    """
    raise outside_prim_func("finalize_reducer")


@intrinsic
def copy(src, dst, coalesced_width: int | None = None, disable_tma: bool = False,
         eviction_policy: str | None = None, loop_layout=None, *, prefer_instruction=None,
         annotations=None) -> None:
    """Copies a region between global, shared, fragment and local buffers.

    Each side is a whole buffer `A`, a tile origin `A[i, j]` (its extent comes
    from the other side) or slices `A[b, i:i + 64, :]`.

    Args:
        src: the region read.
        dst: the region written; its shape equals src's up to dimensions of 1.
        coalesced_width: not supported by tlc (it picks each access's vector width).
        disable_tma: True keeps this copy off the Tensor Memory Accelerator.
        eviction_policy: cache eviction hints; not supported by tlc.
        loop_layout: not supported by tlc (fragment layouts come from layout inference).
        prefer_instruction: TileLang's choice of copy instruction; not supported
            by tlc (it picks TMA, cp.async or thread copies itself).
        annotations: TileLang's lowering annotations; not supported by tlc.

    Example: `T.copy(A[by * 128, k * 32], A_s)`
    """
    raise outside_prim_func("copy")


@intrinsic
def atomic_add(dst, value, memory_order=None, return_prev: bool = False, use_tma: bool = False,
               annotations=None):
    """Atomically adds `value` into a global tensor or shared buffer: one
    element, or a tile.

    An element, `T.atomic_add(C[i, j], v)`: usually in a `T.Parallel` loop,
    one add per iteration (a split-K GEMM's partial sums, a histogram);
    outside it every thread of the block adds. A tile, `T.atomic_add(dQ[b,
    k0:k0 + 64, :], dq)` or `T.atomic_add(C[i0, j0], acc)` (an origin takes
    the source's extent): every element of a fragment, shared or local tile
    added into the region, or one value added to each of its elements.
    float32, float16, bfloat16 (sm_90; a compare-and-swap loop on older
    GPUs), int32, int64, uint32 and uint64 elements; indices outside the tensor add
    nothing, as stores there write nothing.

    Args:
        dst: the element, `C[i, j]`, or the region (slices, an origin, or the
            whole tensor) of a global tensor or shared buffer (a histogram:
            barriers order the adds before later reads).
        value: the value added (converted to the tensor's dtype), or the tile.
        memory_order: "relaxed" (the default), "consume", "acquire",
            "release", "acq_rel" or "seq_cst": a release order fences the
            thread's earlier writes before the add (GPU scope), an acquire
            order its later accesses after it.
        return_prev: True makes the call (of an element) an expression: the
            value the element held before this add.
        use_tma: True adds a whole 2-d shared tile into the tensor's region
            through TMA (sm_90a: one thread issues a bulk tensor reduction,
            `cp.reduce.async.bulk.tensor ... .add`, the hardware clipping what
            falls outside the tensor); float32, float16, bfloat16 or int32,
            the tile in the tensor's dtype; where it cannot be one, an error.
        annotations: not supported by tlc (codegen hints).

    Example: `T.atomic_add(C[by * 64 + i, bx * 64 + j], C_local[i, j])`
    """
    raise outside_prim_func("atomic_add")


@intrinsic
def atomic_addx2(dst, value, return_prev: bool = False):
    """Atomically adds 2 consecutive elements of `value` into the 2
    consecutive elements of a global tensor starting at `dst` (along its last
    dimension): one vector reduction on sm_90 (`red.global.add.v2`), each
    element atomic as with T.atomic_add; a pair partly outside the tensor
    adds only its elements inside. float16, bfloat16 and float32.

    Args:
        dst: the first element, `C[i, j]`, or the pair as a slice, `C[i, j:j + 2]`.
        value: the first element of the pair added, `V[i, j]` (a shared, local or
            global buffer, read as `V[i, j]` and `V[i, j + 1]`), or the pair as a
            slice.
        return_prev: not supported by tlc (the vector reductions return nothing).

    Example: `T.atomic_addx2(dQ[b, k, 2 * j], dq_shared[k, 2 * j])`
    """
    raise outside_prim_func("atomic_addx2")


@intrinsic
def atomic_addx4(dst, value, return_prev: bool = False):
    """T.atomic_addx2 for 4 consecutive elements (`red.global.add.v4` on
    sm_90). float16, bfloat16 and float32.

    Args:
        dst: the first element, `C[i, j]`, or the 4 as a slice, `C[i, j:j + 4]`.
        value: the first element of the 4 added (a shared, local or global
            buffer), or the 4 as a slice.
        return_prev: not supported by tlc (the vector reductions return nothing).

    Example: `T.atomic_addx4(dKV[b, row, 4 * d], acc_shared[r, 4 * d])`
    """
    raise outside_prim_func("atomic_addx4")


@intrinsic
def atomic_max(dst, value, memory_order=None, return_prev: bool = False, annotations=None):
    """Atomically sets an element (or each element of a region) of a global
    tensor or shared buffer to the larger of it and `value`; forms as
    T.atomic_add's. float32 (NaN propagates), int32, int64, uint32, uint64.

    Args:
        dst: the element, `C[i, j]`, or the region.
        value: the value compared (converted to the dtype), or a tile.
        memory_order: as T.atomic_add's.
        return_prev: True makes the call (of an element) an expression: the
            value the element held before.
        annotations: not supported by tlc (codegen hints).

    Example: `T.atomic_max(Amax[0], T.abs(x[i]))`
    """
    raise outside_prim_func("atomic_max")


@intrinsic
def atomic_min(dst, value, memory_order=None, return_prev: bool = False, annotations=None):
    """Atomically sets an element (or each element of a region) of a global
    tensor or shared buffer to the smaller of it and `value`; forms as
    T.atomic_add's. float32 (NaN propagates), int32, int64, uint32, uint64.

    Args:
        dst: the element, `C[i, j]`, or the region.
        value: the value compared (converted to the dtype), or a tile.
        memory_order: as T.atomic_add's.
        return_prev: True makes the call (of an element) an expression: the
            value the element held before.
        annotations: not supported by tlc (codegen hints).

    Example: `T.atomic_min(First[k], i)`
    """
    raise outside_prim_func("atomic_min")


@intrinsic
def atomic_load(src, memory_order="seq_cst"):
    """The value of an element of a global tensor or shared buffer, read
    atomically (a flag another block or thread sets).

    Args:
        src: the element, `flag[0]`, or a one-element buffer (float32, int32,
            int64, uint32, uint64).
        memory_order: "relaxed", "consume", "acquire" or "seq_cst" (the
            default): an acquire order fences the thread's later accesses
            after the read (GPU scope), seq_cst also its earlier ones before.

    Example: `while T.atomic_load(flag[0], memory_order="acquire") == 0: ...`
    """
    raise outside_prim_func("atomic_load")


@intrinsic
def atomic_store(dst, src, memory_order="seq_cst"):
    """Writes `src` to an element of a global tensor or shared buffer atomically.

    Args:
        dst: the element, `flag[0]`, or a one-element buffer (float32, int32,
            int64, uint32, uint64).
        src: the value (converted to the element's dtype).
        memory_order: "relaxed", "release" or "seq_cst" (the default): a
            release order fences the thread's earlier writes before the
            store (GPU scope), seq_cst also its later accesses after it.

    Example: `T.atomic_store(flag[0], 1, memory_order="release")`
    """
    raise outside_prim_func("atomic_store")


@intrinsic
def transpose(src, dst, annotations=None) -> None:
    """dst[j, i] = src[i, j] for two 2-d shared buffers (src M x N, dst N x M):
    the block's work, a T.Parallel loop over the elements.

    Args:
        src: the M x N shared buffer.
        dst: the N x M shared buffer.
        annotations: TileLang's lowering annotations; not supported by tlc.

    Example: `T.transpose(tile, tile_T)`
    """
    raise outside_prim_func("transpose")


@intrinsic
def fill(buffer, value, annotations=None) -> None:
    """Sets every element of a shared, fragment or local buffer to `value`.

    Args:
        buffer: the buffer written.
        value: a number or scalar, converted to the buffer's dtype.
        annotations: TileLang's lowering annotations; not supported by tlc.

    Example: `T.fill(m_f, -T.infinity("float32"))`
    """
    raise outside_prim_func("fill")


@intrinsic
def clear(buffer, annotations=None) -> None:
    """Sets every element of a shared, fragment or local buffer to zero.

    Args:
        buffer: the buffer written.
        annotations: TileLang's lowering annotations; not supported by tlc.

    Example: `T.clear(C_f)`
    """
    raise outside_prim_func("clear")


@intrinsic
def c2d_im2col(img, col, nhw_step, c_step, kernel: int | tuple, stride: int | tuple,
               dilation: int | tuple, pad: int | tuple, eviction_policy: str | None = None,
               annotations=None
               ) -> None:
    """Loads a tile of the im2col matrix of an NHWC image: the A operand of a 2-d
    convolution written as an implicit GEMM.

    The im2col matrix has one row per output pixel, m = (n, oh, ow) flattened
    (ow fastest), and one column per reduction index, k = (kh, kw, c)
    flattened (c fastest), which is the row order of KH x KW x C x F weights
    seen as a (KH * KW * C) x F matrix. `col` (block_M x block_K) receives the
    rows nhw_step * block_M ... and the columns c_step * block_K ...:

        col[i, j] = img[n, oh * stride - pad + kh * dilation,
                        ow * stride - pad + kw * dilation, c]

    with OH = (H + 2 * pad - dilation * (kernel - 1) - 1) // stride + 1 (OW
    likewise); positions in the padding, rows past N * OH * OW and columns
    past KH * KW * C are zero.

    Args:
        img: the N x H x W x C global tensor (H, W, C compile-time; N may be
            T.dynamic).
        col: the block_M x block_K destination, shared (a T.gemm operand) or
            a fragment, of img's dtype.
        nhw_step: which block of block_M output pixels (usually the block index).
        c_step: which block of block_K reduction columns (the reduction loop's index).
        kernel: the kernel size, an int or (KH, KW), compile-time.
        stride: an int or (stride_h, stride_w), compile-time.
        dilation: an int or (dilation_h, dilation_w), compile-time.
        pad: the zero padding on each side, an int or (pad_h, pad_w), compile-time.
        eviction_policy: cache eviction hints; not supported by tlc.
        annotations: TileLang's lowering annotations; not supported by tlc.

    Example: `T.c2d_im2col(data, data_shared, by, k, 3, 1, 1, 1)`
    """
    raise outside_prim_func("c2d_im2col")


@intrinsic
def im2col(img, col, nhw_step, c_step, kernel: int | tuple, stride: int | tuple,
           dilation: int | tuple, pad: int | tuple, eviction_policy: str | None = None,
           annotations: dict | None = None) -> None:
    """T.c2d_im2col under its newer TileLang name: see `help(T.c2d_im2col)`.

    Args:
        img, col, nhw_step, c_step, kernel, stride, dilation, pad: as T.c2d_im2col.
        eviction_policy: cache eviction hints; not supported by tlc.
        annotations: TileLang's lowering annotations; not supported by tlc.

    Example: `T.im2col(data, data_shared, by, k, 3, 1, 1, 1)`
    """
    raise outside_prim_func("im2col")
