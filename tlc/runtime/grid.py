"""Grid expressions: the launch grid of an artifact as integer expressions
over its shape symbols, e.g. "ceildiv(N, 128)".

The language is integer literals, symbol names, + - * // %, unary minus,
parentheses and the calls ceildiv(a, b), min(a, b), max(a, b). An expression
is parsed once with Python's ast module and only those node kinds are
accepted, so evaluating an artifact's grid never runs arbitrary code.
"""

import ast
import operator
from collections.abc import Callable, Iterable, Mapping

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}
_CALLS = {
    "ceildiv": lambda a, b: -(-a // b),
    "min": min,
    "max": max,
}

Evaluator = Callable[[Mapping[str, int]], int]


class GridExpr:
    """A compiled grid expression; call it with the symbol values."""

    def __init__(self, source: str | int, symbols: Iterable[str] | None = None):
        """Compile `source`. When `symbols` is given, a name outside it is an
        error now rather than at launch."""
        self.source = source
        known = None if symbols is None else frozenset(symbols)
        if isinstance(source, int) and not isinstance(source, bool):
            self._eval: Evaluator = lambda _env, v=source: v
            self.symbols: frozenset[str] = frozenset()
            return
        if not isinstance(source, str):
            raise TypeError(f"grid expression must be a string or an int, got {source!r}")
        try:
            tree = ast.parse(source.strip(), mode="eval")
        except SyntaxError as e:
            raise ValueError(f"grid expression {source!r} does not parse: {e.msg}") from None
        names: set[str] = set()
        self._eval = _compile(tree.body, source, names)
        if known is not None and names - known:
            missing = ", ".join(sorted(names - known))
            raise ValueError(
                f"grid expression {source!r} uses {missing}, which is not a "
                f"shape symbol of any parameter")
        self.symbols = frozenset(names)

    def __call__(self, env: Mapping[str, int]) -> int:
        return self._eval(env)

    def __repr__(self) -> str:
        return f"GridExpr({self.source!r})"


def _compile(node: ast.AST, source: str, names: set[str]) -> Evaluator:
    def reject(what: str) -> ValueError:
        return ValueError(
            f"grid expression {source!r}: {what} is not allowed (only integers, "
            f"shape symbols, + - * // %, and ceildiv/min/max calls)")

    if isinstance(node, ast.Constant):
        if type(node.value) is not int:
            raise reject(f"the constant {node.value!r}")
        value = node.value
        return lambda _env: value
    if isinstance(node, ast.Name):
        name = node.id
        names.add(name)
        return lambda env: env[name]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        op = _BINARY[type(node.op)]
        lhs, rhs = _compile(node.left, source, names), _compile(node.right, source, names)
        return lambda env: op(lhs(env), rhs(env))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        op1 = _UNARY[type(node.op)]
        inner = _compile(node.operand, source, names)
        return lambda env: op1(inner(env))
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in _CALLS:
            raise reject(f"the call {ast.unparse(node.func)}(...)")
        if node.keywords or len(node.args) != 2:
            raise reject(f"{node.func.id}() with other than two positional arguments")
        fn = _CALLS[node.func.id]
        a, b = (_compile(arg, source, names) for arg in node.args)
        return lambda env: fn(a(env), b(env))
    raise reject(f"{type(node).__name__} '{ast.unparse(node)}'")
