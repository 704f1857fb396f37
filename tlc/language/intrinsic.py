"""The mark the frontend recognises a `T.` intrinsic by.

An intrinsic is an ordinary Python function with the real parameters and a
docstring (so `help(T.gemm)` and an editor's completion show them). The
frontend never runs its body: it binds the call's AST arguments to the
function's signature and builds tile IR. Run as Python, the body raises
`outside_prim_func(...)`.
"""

from __future__ import annotations

from typing import Callable, TypeVar

F = TypeVar("F", bound=Callable)

# The attribute @intrinsic sets: its value is the name after `T.`.
MARK = "__tlc_intrinsic__"


def intrinsic(fn: F) -> F:
    """Marks `fn` as the `T.<fn.__name__>` intrinsic the frontend compiles."""
    setattr(fn, MARK, fn.__name__)
    return fn


def intrinsic_name(value) -> str | None:
    """The `T.` name of an intrinsic, or None for any other value."""
    name = getattr(value, MARK, None)
    return name if callable(value) and isinstance(name, str) else None


def outside_prim_func(name: str) -> RuntimeError:
    """The error of an intrinsic called from ordinary Python."""
    return RuntimeError(
        f"T.{name} can only be used inside a @T.prim_func (tlc reads the "
        "function's source and compiles it; it is not run as Python)"
    )
