"""`.tile` files: Python-syntax files of top-level @T.prim_func kernels.

A .tile file is run with `T` (tlc.language) and `tlc` already imported. Its
top-level constants are compile-time values; `-D NAME=VALUE` replaces the value
of a top-level `NAME = ...` (so constants derived from NAME follow) or adds
NAME when the file does not assign it.
"""

from __future__ import annotations

import ast
import linecache
import os

from ..errors import CompilationError, Diagnostic, SourceLocation
from .prim_func import PrimFunc


def parse_define(text: str) -> tuple[str, object]:
    """NAME=VALUE -> (NAME, Python literal, or the string when not a literal)."""
    name, sep, value = text.partition("=")
    name = name.strip()
    if not sep or not name.isidentifier():
        raise CompilationError(f"-D expects NAME=VALUE, got '{text}'")
    try:
        return name, ast.literal_eval(value.strip())
    except (ValueError, SyntaxError):
        return name, value.strip()


def _override(tree: ast.Module, defines: dict, path: str) -> set:
    """Replaces the values of top-level assignments to defined names."""
    replaced = set()
    for stmt in tree.body:
        target = None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            target = stmt.target
        if isinstance(target, ast.Name) and target.id in defines:
            value = ast.Constant(defines[target.id])
            stmt.value = ast.copy_location(value, stmt.value)
            replaced.add(target.id)
            continue
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for node in ast.walk(stmt):  # `A, B = ...`, `A += 1`: -D cannot replace these
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) \
                    and node.id in defines:
                raise CompilationError([Diagnostic(
                    f"-D {node.id}=... cannot override this assignment of '{node.id}': write "
                    f"`{node.id} = value` on a line of its own",
                    SourceLocation(path, node.lineno, node.col_offset + 1))])
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    for name in defines:
        if name not in used:
            raise CompilationError(f"-D {name}=...: {path} neither assigns nor uses '{name}'")
    return replaced


def load_tile_file(path: str, defines: dict | None = None) -> dict[str, PrimFunc]:
    """The kernels of a .tile file, by name, in file order."""
    from .. import timing

    with timing.stage("frontend: run the .tile file"):
        return _load(path, defines)


def _load(path: str, defines: dict | None) -> dict[str, PrimFunc]:
    from .. import language as T
    import tlc

    defines = defines or {}
    path = os.path.abspath(path)
    text = _read_source(path)
    lines = text.splitlines(keepends=True)
    linecache.cache[path] = (len(text), None, lines, path)  # so prim_func finds the source
    try:
        tree = ast.parse(text, path)
    except SyntaxError as e:
        raise CompilationError([Diagnostic(f"invalid syntax: {e.msg}",
                                           SourceLocation(path, e.lineno or 0, e.offset or 0))])
    except (RecursionError, MemoryError):
        raise CompilationError(f"{path} nests expressions or blocks more deeply than "
                               "Python's parser allows") from None
    _override(tree, defines, path)
    env = {"T": T, "tlc": tlc, "__name__": "__tile__", "__file__": path}
    env.update(defines)
    try:
        exec(compile(tree, path, "exec"), env)
    except CompilationError:
        raise
    except RecursionError:
        raise CompilationError(f"{path} nests expressions or blocks more deeply than "
                               "Python can compile") from None
    except Exception as e:
        lineno = _traceback_line(e, path)
        raise CompilationError([Diagnostic(f"{type(e).__name__}: {e}",
                                           SourceLocation(path, lineno, 1))]) from None
    kernels = {name: v for name, v in env.items() if isinstance(v, PrimFunc)}
    if not kernels:
        raise CompilationError([Diagnostic("no @T.prim_func kernels in this file",
                                           SourceLocation(path, 1, 1))])
    return kernels


def _read_source(path: str) -> str:
    """The text of a .tile file; unreadable or non-UTF-8 files are errors naming it."""
    from ..output import open_regular

    try:
        with open_regular(path, "source file") as f:
            data = f.read()
    except OSError as e:
        raise CompilationError(str(e) if e.strerror is None else
                               f"cannot read source file '{path}': {e.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise CompilationError([Diagnostic(
            f"the source is not UTF-8 text (byte {data[e.start]:#04x})",
            SourceLocation(path, line, column))]) from None


def _traceback_line(e: BaseException, path: str) -> int:
    tb, line = e.__traceback__, 0
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == path:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
