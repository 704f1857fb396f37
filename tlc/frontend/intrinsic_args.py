"""Reading an intrinsic call's arguments, with errors at the call.

Every keyword an intrinsic accepts takes effect; a keyword TileLang has and
tlc does not honour yet is rejected at the user's line (`not_supported`), so
no argument is silently dropped.
"""

from __future__ import annotations

import ast

from ..language.types import dtype as DType


def not_supported(gen, node, fn: str, arg: str, why: str = ""):
    """The error for a TileLang argument tlc does not honour yet."""
    tail = f" ({why})" if why else ""
    return gen.error(node, f"{fn}: the argument '{arg}' is not supported yet by tlc{tail}; "
                           "remove it")


def bind_args(gen, node, names: list[str], defaults: dict | None = None,
              unsupported: dict[str, str] | None = None) -> dict:
    """Binds a call's AST arguments to `names` (positional, then keyword).

    `unsupported` maps TileLang parameter names tlc rejects to why (a
    positional argument is never one of them: they come after `names`)."""
    defaults = defaults or {}
    unsupported = unsupported or {}
    fn = ast.unparse(node.func)
    if len(node.args) > len(names):
        raise gen.error(node, f"{fn} takes at most {len(names)} arguments, got {len(node.args)}")
    bound = dict(zip(names, node.args))
    for kw in node.keywords:
        if kw.arg is None:
            raise gen.error(kw, f"{fn} does not take **keyword arguments")
        if kw.arg in unsupported:
            raise not_supported(gen, kw, fn, kw.arg, unsupported[kw.arg])
        if kw.arg not in names:
            raise gen.error(kw, f"{fn} has no parameter '{kw.arg}' "
                                f"(parameters: {', '.join(names)})")
        if kw.arg in bound:
            raise gen.error(kw, f"{fn} got '{kw.arg}' twice")
        bound[kw.arg] = kw.value
    missing = [n for n in names if n not in bound and n not in defaults]
    if missing:
        raise gen.error(node, f"{fn} is missing '{missing[0]}'")
    return bound


def static_bool(gen, node, what: str) -> bool:
    """A compile-time True/False (a Python bool or 0/1), else an error at `node`."""
    value = gen.eval_static(node)
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return bool(value)
    raise gen.error(node, f"{what} must be True or False, got {value!r}")


def parse_dtype(gen, node):
    """The dtype an argument names ("float16", T.float16, buf.dtype)."""
    value = gen.eval_static(node)
    try:
        return DType(value)
    except (ValueError, TypeError) as e:
        raise gen.error(node, str(e) if isinstance(value, str) else
                        f"expected a dtype such as \"float16\" or T.float16, got {value!r}") from None
