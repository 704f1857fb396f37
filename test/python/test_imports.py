"""tlc's modules have no import cycle, and each imports on its own in a fresh
interpreter (no module relies on another having been imported first)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import tlc

SOURCE = Path(__file__).resolve().parents[2] / "tlc"


def _modules() -> dict[str, tuple[Path, bool]]:
    """tlc's own modules (the generated MLIR bindings are not in the source
    tree): dotted name -> (file, is a package)."""
    found = {}
    for path in sorted(SOURCE.rglob("*.py")):
        parts = list(path.relative_to(SOURCE.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _top_level_imports(tree: ast.Module) -> list[ast.stmt]:
    """The imports that run when the module is imported (not those in functions)."""
    found = []

    def walk(stmts):
        for s in stmts:
            if isinstance(s, (ast.Import, ast.ImportFrom)):
                found.append(s)
            elif isinstance(s, ast.If) and "TYPE_CHECKING" not in ast.unparse(s.test):
                walk(s.body)
                walk(s.orelse)
            elif isinstance(s, ast.Try):
                walk(s.body)
                walk(s.orelse)
                walk(s.finalbody)
                for handler in s.handlers:
                    walk(handler.body)

    walk(tree.body)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the tlc modules its top-level imports name."""
    modules = _modules()
    graph = {}
    for name, (path, is_package) in modules.items():
        package = name if is_package else name.rpartition(".")[0]
        edges = set()
        for stmt in _top_level_imports(ast.parse(path.read_text())):
            if isinstance(stmt, ast.Import):
                edges |= {a.name for a in stmt.names if a.name in modules}
                continue
            base = stmt.module or ""
            if stmt.level:
                up = package.split(".")[:len(package.split(".")) - (stmt.level - 1)]
                base = ".".join(up + ([stmt.module] if stmt.module else []))
            for alias in stmt.names:
                if f"{base}.{alias.name}" in modules:
                    edges.add(f"{base}.{alias.name}")
                elif base in modules:
                    edges.add(base)
        graph[name] = edges - {name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle (a list of modules, the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(v):
        state[v] = 1
        path.append(v)
        for w in sorted(graph.get(v, ())):
            if state.get(w) == 1:
                return path[path.index(w):] + [w]
            if w not in state and (cycle := visit(w)):
                return cycle
        path.pop()
        state[v] = 2
        return None

    for v in sorted(graph):
        if v not in state and (cycle := visit(v)):
            return cycle
    return None


def test_the_cycle_finder_finds_cycles():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_the_graph_sees_relative_and_package_imports():
    graph = import_graph()
    assert "tlc.frontend.intrinsic_args" in graph["tlc.frontend.intrinsics"]
    assert "tlc.language.intrinsic" in graph["tlc.language.memory"]
    assert "tlc.frontend.prim_func" in graph["tlc.language"]


def test_no_import_cycle_in_tlc():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


# Imports each module in a child forked from an interpreter that has not
# imported tlc: every child starts with no tlc module loaded.
_DRIVER = textwrap.dedent("""
    import importlib, os, sys, traceback
    names = sys.argv[1:]
    failed, running = [], {}

    def reap():
        pid, status = os.wait()
        if status:
            failed.append(running[pid])
        del running[pid]

    for name in names:
        if len(running) >= 2:
            reap()
        pid = os.fork()
        if pid == 0:
            try:
                importlib.import_module(name)
            except BaseException:
                traceback.print_exc()
                os._exit(1)
            os._exit(0)
        running[pid] = name
    while running:
        reap()
    print("FAILED:", " ".join(sorted(failed)))
""")


def test_each_module_imports_alone(tmp_path):
    names = sorted(_modules())
    assert len(names) > 40 and "tlc.frontend.intrinsics" in names
    # tlc from where the tests import it (the overlay or the installed package),
    # never from the source tree in the working directory.
    env = dict(os.environ, PYTHONPATH=str(Path(tlc.__file__).parents[1]) + os.pathsep
               + os.environ.get("PYTHONPATH", ""))
    run = subprocess.run([sys.executable, "-c", _DRIVER, *names], capture_output=True,
                         text=True, cwd=tmp_path, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "FAILED:", run.stdout + run.stderr
