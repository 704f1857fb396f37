"""Reading an intrinsic call's arguments, with errors at the call.

An intrinsic's parameters (names, order, defaults) come from its Python
function in tlc.language, the one place they are written. Every argument an
intrinsic accepts takes effect; a parameter TileLang has and tlc does not
honour yet is rejected at the user's line (`not_supported`), so no argument
is silently dropped.
"""

from __future__ import annotations

import ast
import inspect

from ..language.types import dtype as DType


def not_supported(gen, node, fn: str, arg: str, why: str = ""):
    """The error for a TileLang argument tlc does not honour yet."""
    tail = f" ({why})" if why else ""
    return gen.error(node, f"{fn}: the argument '{arg}' is not supported yet by tlc{tail}; "
                           "remove it")


def batch_of_one(gen, a, what: str) -> None:
    """TileLang's `batch` of a reduction (outputs per batched all-reduce, a
    tuning knob): 1 only, since tlc combines each output element on its own."""
    if "batch" in a.given and gen.eval_static(a["batch"]) != 1:
        raise gen.error(a["batch"], f"{what}: batch (TileLang's outputs per batched "
                                    "all-reduce) must be 1 in tlc, which combines each output "
                                    f"element on its own; got {gen.eval_static(a['batch'])!r}")


class BoundArgs(dict):
    """A call's arguments by parameter name: the AST node given, or for a
    parameter left out, a constant node holding its default (located at the
    call). `given` holds the names the call spelled out."""

    def __init__(self, given: set[str]):
        super().__init__()
        self.given = given


def parameters(fn) -> list[inspect.Parameter]:
    """An intrinsic's parameters, from its Python signature (tlc.language)."""
    return list(inspect.signature(fn).parameters.values())


def bind_args(gen, node, fn, unsupported: dict[str, str] | None = None) -> BoundArgs:
    """Binds a call's AST arguments to intrinsic `fn`'s signature, as Python
    would bind them: positional, then keyword, then defaults.

    A `*name` parameter gets the list of the extra positional nodes.
    `unsupported` maps TileLang parameter names tlc rejects to why; giving one
    (by position or keyword) is an error at that argument."""
    unsupported = unsupported or {}
    name = ast.unparse(node.func)
    params = parameters(fn)
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    var = next((p for p in params if p.kind == p.VAR_POSITIONAL), None)
    keywords = [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if var is None and len(node.args) > len(positional):
        raise gen.error(node, f"{name} takes at most {len(positional)} arguments, "
                              f"got {len(node.args)}")
    bound = BoundArgs(set())
    for p, arg in zip(positional, node.args):
        if p.name in unsupported:
            raise not_supported(gen, arg, name, p.name, unsupported[p.name])
        bound[p.name] = arg
    if var is not None:
        bound[var.name] = list(node.args[len(positional):])
    for kw in node.keywords:
        if kw.arg is None:
            raise gen.error(kw, f"{name} does not take **keyword arguments")
        if kw.arg in unsupported:
            raise not_supported(gen, kw, name, kw.arg, unsupported[kw.arg])
        if kw.arg not in keywords:
            known = ["*" + p.name if p.kind == p.VAR_POSITIONAL else p.name for p in params
                     if p.kind != p.VAR_KEYWORD and p.name not in unsupported]
            raise gen.error(kw, f"{name} has no parameter '{kw.arg}' "
                                f"(parameters: {', '.join(known)})")
        if kw.arg in bound:
            raise gen.error(kw, f"{name} got '{kw.arg}' twice")
        bound[kw.arg] = kw.value
    bound.given = set(bound)
    for p in params:
        if p.name in bound or p.kind == p.VAR_POSITIONAL:
            continue
        if p.default is p.empty:
            raise gen.error(node, f"{name} is missing '{p.name}'")
        bound[p.name] = ast.copy_location(ast.Constant(value=p.default), node)
    return bound


def static_bool(gen, node, what: str) -> bool:
    """A compile-time True/False (a Python bool or 0/1), else an error at `node`."""
    value = gen.eval_static(node)
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return bool(value)
    raise gen.error(node, f"{what} must be True or False, got {value!r}")


def called_name(node) -> str | None:
    """The name a call's function is spelled with (`copy` for `T.copy(...)`
    and `copy(...)`), else None (not a call, or a computed callee): for the
    looks ahead at a function's statements before they are built."""
    if not isinstance(node, ast.Call):
        return None
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)


def known_int(gen, node):
    """The compile-time integer `node` is, or None: only names, constants and
    arithmetic are evaluated (nothing that would build IR or fail loudly)."""
    from ..errors import CompilationError

    if not all(isinstance(n, (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.operator,
                              ast.unaryop, ast.Load)) for n in ast.walk(node)):
        return None
    try:
        value = gen.eval(node)
    except CompilationError:
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parse_dtype(gen, node):
    """The dtype an argument names ("float16", T.float16, buf.dtype)."""
    value = gen.eval_static(node)
    try:
        return DType(value)
    except (ValueError, TypeError) as e:
        raise gen.error(node, str(e) if isinstance(value, str) else
                        f"expected a dtype such as \"float16\" or T.float16, got {value!r}") from None


def static_shape(gen, node, what: str) -> tuple:
    """A buffer's static shape argument: an int (one dimension) or a tuple of
    positive ints; else an error at `node` naming `what` ("a fragment
    buffer")."""
    shape = gen.eval(node)
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)) or not shape or not all(
            isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in shape):
        raise gen.error(node, f"{what} needs a static shape of positive ints, got "
                              f"{gen.describe(shape)}")
    return tuple(shape)
