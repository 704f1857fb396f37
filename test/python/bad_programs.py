"""Compiling a small program that must fail: the source is written to a file
first, so that the error can be checked to name that file and line."""

from __future__ import annotations

import pytest

import tlc


def compile_error(tmp_path, code: str, target: str = "sm_90a") -> tuple[str, str]:
    """(the error's text, the file's path) of compiling prim_func `bad`,
    defined by `code` (a module that imports what it uses)."""
    path = tmp_path / "bad_program.py"
    path.write_text(code)
    namespace: dict = {}
    exec(compile(code, str(path), "exec"), namespace)
    with pytest.raises(tlc.CompilationError) as e:
        tlc.compile(namespace["bad"], target=target)
    return str(e.value), str(path)


def assert_line_error(tmp_path, params: str, body: str, message: str, prelude=(),
                      threads: int = 64, target: str = "sm_90a") -> None:
    """Compiling `def bad(<params>)`, whose one-block kernel of `threads` threads
    runs the `prelude` statements and then `body` (lines joined by newlines,
    indented as in the kernel), fails with `message`, naming the file and the
    body's last line."""
    lines = ["import tlc.language as T", "@T.prim_func", f"def bad({params}):",
             f"    with T.Kernel(1, threads={threads}):"]
    lines += [f"        {statement}" for statement in prelude]
    lines.append(f"        {body}")
    code = "\n".join(lines) + "\n"
    error, path = compile_error(tmp_path, code, target)
    last = code.count("\n")
    assert message in error and f"{path}:{last}:" in error, error
