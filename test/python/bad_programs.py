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
