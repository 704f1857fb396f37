"""@T.prim_func: capture a kernel's source, closure and parameter annotations."""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import linecache
import textwrap

from ..errors import CompilationError, Diagnostic, SourceLocation


class PrimFunc:
    """A tile program: the function's AST plus the compile-time values it sees.

    Nothing is built when it is created; `build_module` turns it into tile IR.
    """

    def __init__(self, fn, node: ast.FunctionDef, filename: str, env: dict):
        self.fn = fn
        self.name = node.name
        self.node = node
        self.filename = filename
        self.env = env
        # The annotations as Python evaluated them at `def` time (in a factory
        # they see its locals, which the body's closure may not capture).
        self.annotations = dict(getattr(fn, "__annotations__", None) or {})

    @property
    def source(self) -> str:
        """The function's source text (for cache keys and messages)."""
        return ast.unparse(self.node)

    def build_module(self, context=None):
        """Builds the tile IR module of this program (in `context` or a new one)."""
        from .. import timing

        with timing.stage("frontend: import the code generator"):  # once per process
            from .codegen import build_module

        return build_module(self, context)

    def script(self) -> str:
        """The tile IR of this program as text (TileLang's `func.script()`)."""
        return str(self.build_module())

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            f"'{self.name}' is a @T.prim_func: compile it (tlc.compile, @tlc.jit or the "
            "tlc command) and call the compiled kernel"
        )

    def __repr__(self) -> str:
        return f"<tlc.PrimFunc {self.name} from {self.filename}>"


def _closure_env(fn) -> dict:
    """Globals, then builtins, overridden by the closure's cells (enclosing locals)."""
    env = dict(vars(builtins))
    env.update(fn.__globals__)
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            env[name] = cell.cell_contents
        except ValueError:  # a cell not yet filled: the name is unbound here
            pass
    return env


def _find_def(fn, filename: str) -> ast.FunctionDef:
    """The FunctionDef of `fn` in its file, found by its first line."""
    # The file as it is now: a module edited and reloaded must not be compiled from
    # the text linecache read before (its bytecode, which the cache key hashes, is new).
    linecache.checkcache(filename)
    lines = linecache.getlines(filename, fn.__globals__)
    if not lines:
        try:
            src_lines, start = inspect.getsourcelines(fn)
        except (OSError, TypeError) as e:
            raise CompilationError(
                f"cannot read the source of '{fn.__name__}' ({e}); tlc compiles a "
                "@T.prim_func from its source, so define it in a file"
            ) from None
        tree = ast.parse(textwrap.dedent("".join(src_lines)))
        ast.increment_lineno(tree, start - 1)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                node.col_offset += len(src_lines[0]) - len(src_lines[0].lstrip())
                return node
    first = fn.__code__.co_firstlineno
    node = _definitions(filename, lines).get((fn.__name__, first))
    if node is not None:
        return node  # shared by the PrimFuncs of one def: the frontend only reads it
    raise CompilationError(
        [Diagnostic(f"cannot find the source of '{fn.__name__}'",
                    SourceLocation(filename, first, 1))]
    )


def _find_lambda(fn, filename: str) -> ast.FunctionDef | None:
    """A FunctionDef returning the body of the lambda `fn` (found in its file by
    its line, its parameters and, among lambdas alike on one line, where its
    code starts), or None when it cannot be told apart."""
    linecache.checkcache(filename)
    lines = linecache.getlines(filename, fn.__globals__)
    if not lines:
        return None
    code = fn.__code__
    params = list(code.co_varnames[:code.co_argcount])
    found = [n for n in _definitions(filename, lines).get(("<lambda>", code.co_firstlineno), [])
             if [a.arg for a in n.args.args] == params and not n.args.vararg
             and not n.args.kwarg and not n.args.kwonlyargs]
    if len(found) > 1:  # several alike on the line: the one holding the code's start
        start = next(((line, col) for line, _, col, end in code.co_positions()
                      if line is not None and col is not None and end is not None
                      and end > col), None)  # (RESUME's position is empty)
        found = [n for n in found if start is not None and
                 (n.body.lineno, n.body.col_offset) <= start <=
                 (n.body.end_lineno, n.body.end_col_offset)]
    if len(found) != 1:
        return None
    node = found[0]
    fdef = ast.FunctionDef(name="<lambda>", args=node.args, body=[ast.Return(node.body)],
                           decorator_list=[], returns=None)
    if "type_params" in ast.FunctionDef._fields:  # Python 3.12
        fdef.type_params = []
    return ast.fix_missing_locations(ast.copy_location(fdef, node))


# filename -> (the linecache lines parsed, {(name, first line): FunctionDef}):
# a file of many kernels is parsed once, not once per kernel.
_DEFINITIONS: dict[str, tuple[list, dict]] = {}


def _definitions(filename: str, lines: list) -> dict:
    """The FunctionDefs of a file's text by (name, line of the def or of its
    first decorator), parsed once per text linecache holds."""
    cached = _DEFINITIONS.get(filename)
    if cached is not None and cached[0] is lines:
        return cached[1]
    tree = ast.parse("".join(lines), filename)
    index: dict = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            index.setdefault((node.name, start), node)
            index.setdefault((node.name, node.lineno), node)
        elif isinstance(node, ast.Lambda):  # every lambda of a line, in order
            index.setdefault(("<lambda>", node.lineno), []).append(node)
    if len(_DEFINITIONS) >= 64:
        _DEFINITIONS.clear()
    _DEFINITIONS[filename] = (lines, index)
    return index


class Macro:
    """A @T.macro: a function whose body the frontend builds in place of each
    call inside a prim_func (or another macro), its parameters bound to the
    call's arguments: buffers, run-time values or compile-time Python values.

    Its names resolve as Python would resolve them in the function: its
    parameters and its own assignments, then its closure and globals, never
    the caller's locals. A final `return value` makes the call an expression."""

    def __init__(self, fn, node: ast.FunctionDef | None = None):
        self.fn = fn
        self.name = fn.__name__
        self.filename = fn.__code__.co_filename
        self.node = node or _find_def(fn, self.filename)
        functools.update_wrapper(self, fn)

    @property
    def env(self) -> dict:
        """Its closure and globals as they are when a call is built (a macro may
        call macros defined after it)."""
        return _closure_env(self.fn)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"'{self.name}' is a @T.macro: call it inside a @T.prim_func, "
                           "which builds its body in place of the call")

    def __repr__(self) -> str:
        return f"<tlc.Macro {self.name} from {self.filename}>"


def macro(fn=None, *, hygienic: bool = True):
    """Marks a function as a macro of tile code (TileLang's `@T.macro`): calls
    to it inside a @T.prim_func build its body there, with its parameters
    bound to the call's arguments. `hygienic=False` (TileLang's option to let
    the body read the caller's names) is not supported: a macro reads its own
    closure and globals."""
    if not hygienic:
        raise NotImplementedError("T.macro(hygienic=False) is not supported by tlc: pass the "
                                  "values the body needs as arguments")
    if fn is None:
        return lambda f: macro(f)
    return fn if isinstance(fn, Macro) else Macro(fn)


def prim_func(fn) -> PrimFunc:
    """Marks a function as a tile program (TileLang's `@T.prim_func`)."""
    if isinstance(fn, PrimFunc):
        return fn
    filename = fn.__code__.co_filename
    node = _find_def(fn, filename)
    return PrimFunc(fn, node, filename, _closure_env(fn))
