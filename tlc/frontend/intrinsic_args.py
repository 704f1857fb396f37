"""Reading an intrinsic call's arguments, with errors at the call."""

from __future__ import annotations

import ast

from ..language.types import dtype as DType


def bind_args(gen, node, names: list[str], defaults: dict | None = None) -> dict:
    """Binds a call's AST arguments to `names` (positional, then keyword)."""
    defaults = defaults or {}
    fn = ast.unparse(node.func)
    if len(node.args) > len(names):
        raise gen.error(node, f"{fn} takes at most {len(names)} arguments, got {len(node.args)}")
    bound = dict(zip(names, node.args))
    for kw in node.keywords:
        if kw.arg is None:
            raise gen.error(kw, f"{fn} does not take **keyword arguments")
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


def parse_dtype(gen, node):
    """The dtype an argument names ("float16", T.float16, buf.dtype)."""
    value = gen.eval_static(node)
    try:
        return DType(value)
    except (ValueError, TypeError) as e:
        raise gen.error(node, str(e) if isinstance(value, str) else
                        f"expected a dtype such as \"float16\" or T.float16, got {value!r}") from None
