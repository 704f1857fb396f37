"""T.print: printing from the GPU while debugging a kernel."""

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
