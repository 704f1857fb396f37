"""Whole-tile computations: T.gemm and the T.reduce_* family."""

from __future__ import annotations

from .intrinsic import intrinsic, outside_prim_func
from .policy import GemmWarpPolicy


@intrinsic
def gemm(A, B, C, transpose_A: bool = False, transpose_B: bool = False,
         policy: GemmWarpPolicy = GemmWarpPolicy.Square, clear_accum: bool = False,
         k_pack: int = 1, mbar=None, annotations=None, *, wg_wait: int = 0) -> None:
    """C += A @ B on the tensor cores (mma.sync, or wgmma on sm_90a).

    Args:
        A: the M x K operand (K x M with transpose_A), shared or fragment.
        B: the K x N operand (N x K with transpose_B), shared.
        C: the M x N accumulator fragment.
        transpose_A: A is stored K x M.
        transpose_B: B is stored N x K.
        policy: how the output tile is spread over the warps (T.GemmWarpPolicy).
        clear_accum: C = A @ B instead of C += A @ B.
        k_pack: AMD's MFMA K packing; must be 1 on NVIDIA GPUs.
        mbar: Blackwell's tcgen05 completion barrier; not supported by tlc
            (sm_80 and sm_90a).
        annotations: TileLang's lowering annotations; not supported by tlc.
        wg_wait: (keyword only, as in TileLang's earlier T.gemm) wgmma groups
            left in flight after this gemm (0: wait for all; up to num_stages
            - 2 in a T.Pipelined loop that copies A and B, the rest waited for
            after the loop; -1: wait for none, a later T.wait_wgmma completes
            the gemm, and nothing may touch C, write A or B in between: an
            error otherwise; at the end of a loop's body, that wait may be
            in the next iteration, then also after the loop). Not given, the
            compiler leaves one group in flight in pipelined loops of 4 or
            more stages.

    Example: `T.gemm(A_s, B_s, C_f, transpose_B=True)`
    """
    raise outside_prim_func("gemm")


@intrinsic
def wgmma_gemm(A, B, C, transpose_A: bool = False, transpose_B: bool = False,
               policy: GemmWarpPolicy = GemmWarpPolicy.Square, clear_accum: bool = False,
               annotations=None) -> None:
    """C += A @ B on wgmma only (sm_90a), issued without a wait.

    T.gemm(..., wg_wait=-1) that never falls back to mma.sync: where wgmma
    cannot run the gemm (another target, operands it cannot read), an error.
    A later `T.wait_wgmma(n)` in the same block (or, at the end of a loop's
    body, in the next iteration) completes it; touching C or writing A or B
    before that wait is an error.

    Args:
        A, B, C, transpose_A, transpose_B, policy, clear_accum: as T.gemm's.
        annotations: TileLang's lowering annotations; not supported by tlc.

    Example: `T.wgmma_gemm(Q_s, K_s, S, transpose_B=True)` ... `T.wait_wgmma(0)`
    """
    raise outside_prim_func("wgmma_gemm")


@intrinsic
def wait_wgmma(id: int) -> None:  # noqa: A002 (TileLang's name)
    """Waits until at most `id` wgmma groups of the warpgroup are running.

    Completes the gemms issued with `wg_wait=-1` before it, all but the last
    `id` of them (each gemm is one group), so that the code between a
    gemm and its wait runs while the tensor cores work (FlashAttention-3's
    softmax beside the next block's Q K^T). In a loop, it may complete a
    gemm the previous iteration left running (a K loop's `T.wait_wgmma(1)`
    after its gemm; also under `if k > 0:`, which is run before the `if`);
    a T.Pipelined loop then keeps each stage an iteration longer, so it
    needs `num_stages` of at least the groups left running + 2. On mma.sync
    (sm_80) gemms complete in program order and the wait does nothing.

    Args:
        id: how many of the most recent wgmma groups may keep running
            (TileLang's name).

    Example: `T.gemm(Q_s, K_s, S, transpose_B=True, wg_wait=-1)` ...
    `T.wait_wgmma(0)`
    """
    raise outside_prim_func("wait_wgmma")


@intrinsic
def reduce_max(buffer, out, dim: int = -1, clear: bool = True, batch: int = 1,
               nan_propagate: bool = False, annotations=None) -> None:
    """out = the maximum of `buffer` along `dim` (fragments).

    Args:
        buffer: the source fragment.
        out: the destination fragment: buffer's shape without `dim`.
        dim: the reduced dimension (negative counts from the end).
        clear: False folds in out's current values (out = max(out, ...)).
        nan_propagate: True: a NaN makes the result NaN; False (TileLang's
            default): NaNs are skipped (PTX max/min without .NaN).
        batch: TileLang's outputs per batched all-reduce, a tuning knob: 1
            only (tlc combines each output element on its own).
        annotations: TileLang's lowering annotations; not supported by tlc.

    Example: `T.reduce_max(s_f, m_f, dim=1)`
    """
    raise outside_prim_func("reduce_max")


@intrinsic
def reduce_min(buffer, out, dim: int = -1, clear: bool = True, batch: int = 1,
               nan_propagate: bool = False, annotations=None) -> None:
    """out = the minimum of `buffer` along `dim` (fragments).

    Args:
        buffer: the source fragment.
        out: the destination fragment: buffer's shape without `dim`.
        dim: the reduced dimension (negative counts from the end).
        clear: False folds in out's current values.
        nan_propagate: True: a NaN makes the result NaN; False (TileLang's
            default): NaNs are skipped (PTX max/min without .NaN).
        batch: TileLang's outputs per batched all-reduce, a tuning knob: 1
            only (tlc combines each output element on its own).
        annotations: TileLang's lowering annotations; not supported by tlc.

    Example: `T.reduce_min(s_f, lo_f, dim=1)`
    """
    raise outside_prim_func("reduce_min")


@intrinsic
def reduce_sum(buffer, out, dim: int = -1, clear: bool = True, batch: int = 1,
               annotations=None) -> None:
    """out = the sum of `buffer` along `dim` (fragments).

    Args:
        buffer: the source fragment.
        out: the destination fragment: buffer's shape without `dim`.
        dim: the reduced dimension (negative counts from the end).
        clear: False adds to out's current values.
        batch: TileLang's outputs per batched all-reduce, a tuning knob: 1
            only (tlc combines each output element on its own).
        annotations: TileLang's lowering annotations; not supported by tlc.

    Example: `T.reduce_sum(p_f, l_f, dim=1)`
    """
    raise outside_prim_func("reduce_sum")


@intrinsic
def reduce_abssum(buffer, out, dim: int = -1, batch: int = 1, annotations=None, *,
                  clear: bool = True) -> None:
    """out = the sum of |buffer| along `dim` (fragments).

    Args:
        buffer: the source fragment.
        out: the destination fragment: buffer's shape without `dim`.
        dim: the reduced dimension (negative counts from the end).
        batch: TileLang's outputs per batched all-reduce, a tuning knob: 1
            only (tlc combines each output element on its own).
        annotations: TileLang's lowering annotations; not supported by tlc.
        clear: False adds to out's current values (keyword only: TileLang's
            reduce_abssum has none).

    Example: `T.reduce_abssum(x_f, n_f, dim=0)`
    """
    raise outside_prim_func("reduce_abssum")


@intrinsic
def reduce_absmax(buffer, out, dim: int = -1, clear: bool = True, batch: int = 1,
                  nan_propagate: bool = False, annotations=None) -> None:
    """out = the maximum of |buffer| along `dim` (fragments).

    Args:
        buffer: the source fragment.
        out: the destination fragment: buffer's shape without `dim`.
        dim: the reduced dimension (negative counts from the end).
        clear: False folds in out's current values.
        nan_propagate: True: a NaN makes the result NaN; False (TileLang's
            default): NaNs are skipped (PTX max/min without .NaN).
        batch: TileLang's outputs per batched all-reduce, a tuning knob: 1
            only (tlc combines each output element on its own).
        annotations: TileLang's lowering annotations; not supported by tlc.

    Example: `T.reduce_absmax(x_f, amax_f, dim=1)`
    """
    raise outside_prim_func("reduce_absmax")


@intrinsic
def cumsum(src, dst=None, dim: int = 0, reverse: bool = False, annotations=None) -> None:
    """Inclusive prefix sums of `src` along `dim`, into `dst` (in place
    when dst is None): shared buffers or fragments of the same shape.

    Each line along `dim` is summed in order by one thread (the lines spread
    over the block's threads), reading a shared copy of `src`, so `dst` may
    be `src`; float16 / bfloat16 lines are summed in float32 and rounded
    once per element.

    Args:
        src: a shared buffer or fragment (float32, float16, bfloat16, int32, int64).
        dst: where the sums go (src's shape and dtype); None: src.
        dim: the scanned dimension (negative counts from the end).
        reverse: True sums from the end (suffix sums).
        annotations: not supported by tlc (codegen hints).

    Example: `T.cumsum(scores_s, dim=1)`
    """
    raise outside_prim_func("cumsum")


@intrinsic
def cummax(src, dst=None, dim: int = 0, reverse: bool = False, annotations=None) -> None:
    """Running maxima of `src` along `dim`, into `dst` (in place when dst
    is None); as T.cumsum.

    Args:
        src: a shared buffer or fragment (float32, float16, bfloat16, int32, int64).
        dst: where the maxima go (src's shape and dtype); None: src.
        dim: the scanned dimension (negative counts from the end).
        reverse: True scans from the end.
        annotations: not supported by tlc (codegen hints).

    Example: `T.cummax(m_s, dim=0)`
    """
    raise outside_prim_func("cummax")
