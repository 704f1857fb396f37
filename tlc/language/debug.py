"""T.print, T.device_assert and T.assume: checking and printing from the GPU while
debugging a kernel."""

from __future__ import annotations

from .intrinsic import intrinsic, outside_prim_func


@intrinsic
def print(obj, msg: str = "") -> None:  # noqa: A001 (TileLang's name)
    """Prints from the GPU (device printf), for debugging.

    A scalar (a number, an expression, a `T.alloc_var`, a buffer element)
    is printed by every thread that runs the statement, after `msg` and the
    block's indices. A shared, fragment or local buffer is printed element by
    element with its indices, each element by a thread that holds it (a
    fragment element that several threads hold is printed once by each).
    Output appears when the kernel finishes (the CUDA driver's printf buffer);
    the interpreter prints the same lines, once per block (scalars) or per
    element rather than once per thread.

    Args:
        obj: a scalar value or an on-chip buffer (not a global tensor: copy
            the tile of interest into a buffer first).
        msg: a text printed before the value (a compile-time string).

    Example: `T.print(acc, msg="acc after the loop")`
    """
    raise outside_prim_func("print")


@intrinsic
def device_assert(condition, msg: str = "", no_stack_info=False) -> None:
    """Stops the kernel where `condition` is false: the thread prints `msg` (after the
    program's file and line, unless `no_stack_info`) and traps, so the launch fails with
    an error. The interpreter raises an error at the line instead.

    Args:
        condition: a boolean (run-time, or a compile-time value: True checks nothing).
        msg: the text printed (a compile-time string).
        no_stack_info: leave the file and line out of the printed text.

    Example: `T.device_assert(idx < n, "index past the end")`
    """
    raise outside_prim_func("device_assert")


@intrinsic
def assume(cond) -> None:
    """Tells the compiler `cond` holds (LLVM's assume), so it may simplify with it; a
    false assumption is undefined behaviour on the GPU, and an error at the line in the
    interpreter.

    Args:
        cond: a boolean (run-time, or a compile-time value: True says nothing).

    Example: `T.assume(cta_id < 2)`
    """
    raise outside_prim_func("assume")
