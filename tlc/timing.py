"""Where compile time goes: `tlc FILE --time-passes` and TLC_TIMING=1.

A timing session collects one row per stage (the Python frontend, each
pipeline of tlc/compiler/pipeline.py, the disk-cache lookup, the artifact)
and, inside each pipeline, one row per pass, named as in the pipeline string
(`tile-infer-layout`, `convert-gpu-to-nvvm`, `gpu-module-to-binary`, ...).
The per-pass times are MLIR's own pass timing (PassManager.enable_timing):
the C++ side prints its report to stderr when the pass manager is destroyed,
so that moment runs with file descriptor 2 sent to a temporary file, and the
report is read back into rows (anything else written there is passed on).
At the end of the session one table goes to stderr. The redirection is of
the whole process's fd 2, for the microseconds of that destruction: what
another thread writes to stderr then is passed on after it, not lost.

Outside a session nothing is timed and nothing is printed; this module
imports only the standard library, so timing a disk-cache hit loads no
compiler.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class Row:
    """One line of the table: a stage or a pass, `depth` levels deep."""

    name: str
    depth: int
    seconds: float = 0.0
    note: str = ""


@dataclass
class Timings:
    """The rows of one session, in the order the stages ran."""

    title: str
    rows: list[Row] = field(default_factory=list)
    depth: int = 0
    total: float = 0.0

    def format(self) -> str:
        """The table: stage and pass names, milliseconds, share of the total."""
        top = sum(r.seconds for r in self.rows if r.depth == 0)
        rows = list(self.rows)
        rest = self.total - top
        if rest > 0:
            rows.append(Row("rest (outside the stages above)", 0, rest))
        width = max([len("  " * r.depth + r.name) for r in rows] + [len("total"), 24])
        lines = [f"tlc timing: {self.title}",
                 f"  {'stage / pass'.ljust(width)}  {'ms':>9}  {'%':>5}"]
        for r in rows:
            share = 100.0 * r.seconds / self.total if self.total > 0 else 0.0
            name = ("  " * r.depth + r.name).ljust(width)
            note = f"  {r.note}" if r.note else ""
            lines.append(f"  {name}  {r.seconds * 1e3:9.2f}  {share:5.1f}{note}")
        lines.append(f"  {'total'.ljust(width)}  {self.total * 1e3:9.2f}  {100.0:5.1f}")
        return "\n".join(lines) + "\n"


_LOCAL = threading.local()  # each thread's sessions: compilations in threads time apart


def _sessions() -> list[Timings]:
    if not hasattr(_LOCAL, "sessions"):
        _LOCAL.sessions = []
    return _LOCAL.sessions


def active() -> Timings | None:
    """This thread's session in progress, or None."""
    sessions = _sessions()
    return sessions[-1] if sessions else None


def enabled_by_environment() -> bool:
    """TLC_TIMING is set to something other than empty or 0."""
    return os.environ.get("TLC_TIMING", "") not in ("", "0")


@contextmanager
def session(title: str, enabled: bool = True, out=None):
    """Times what runs inside and prints the table to `out` (stderr) at the
    end, also when it ends with an error. Inside another session (a
    tlc.compile inside `tlc --time-passes`) the rows join the outer one."""
    if not enabled or active() is not None:
        yield active()
        return
    timings = Timings(title)
    _sessions().append(timings)
    start = time.perf_counter()
    try:
        yield timings
    finally:
        timings.total = time.perf_counter() - start
        _sessions().pop()
        stream = out or sys.stderr
        stream.write(timings.format())
        stream.flush()


@contextmanager
def stage(name: str):
    """Times one stage of the active session (nothing when there is none);
    rows added inside it are nested under it. Yields the row or None."""
    timings = active()
    if timings is None:
        yield None
        return
    row = Row(name, timings.depth)
    timings.rows.append(row)
    timings.depth += 1
    start = time.perf_counter()
    try:
        yield row
    finally:
        row.seconds = time.perf_counter() - start
        timings.depth -= 1


# -- MLIR's pass timing -------------------------------------------------------


def pipeline_passes(pipeline: str) -> list[tuple[int, str]]:
    """(depth, name) of every pass and nested pipeline of a textual pipeline,
    in order, below its anchor: "builtin.module(a,gpu.module(b{x=1}))" ->
    [(0, "a"), (0, "gpu.module"), (1, "b")]."""
    out: list[tuple[int, str]] = []
    depth, name, braces = -1, "", 0
    for ch in pipeline:
        if braces:
            braces += {"{": 1, "}": -1}.get(ch, 0)
            continue
        if ch == "{":
            braces = 1
        elif ch == "(":
            if depth >= 0:
                out.append((depth, name.strip()))
            depth, name = depth + 1, ""
        elif ch in ",)":
            if name.strip():
                out.append((depth, name.strip()))
            name = ""
            if ch == ")":
                depth -= 1
        else:
            name += ch
    return out


# "    0.0036 (  3.1%)  LowerAffinePass": one or two time columns (user, wall;
# the wall time is the last), then the name indented two spaces per level.
_REPORT_ROW = re.compile(r"^((?:\s*\d+\.\d+ \(\s*\d+\.\d+%\))+)  ( *)(\S.*)$")


def parse_pass_report(text: str) -> tuple[list[tuple[int, str, float]], str]:
    """The (depth, MLIR name, wall seconds) rows of MLIR's text timing report,
    without analyses, "Rest" and "Total"; and the text that was not part of a
    report (returned so that it can be passed on)."""
    rows, other = [], []
    in_report = False
    for line in text.splitlines(keepends=True):
        if "Execution time report" in line:
            in_report = True
            if other and other[-1].startswith("==="):
                other.pop()  # the report's opening rule
            continue
        m = _REPORT_ROW.match(line.rstrip("\n")) if in_report else None
        if m:
            name = m.group(3).strip()
            wall = float(re.findall(r"(\d+\.\d+) \(", m.group(1))[-1])
            if name == "Total":
                in_report = False
            elif name != "Rest" and not name.startswith("(A)"):
                rows.append((len(m.group(2)) // 2, name, wall))
        elif in_report and (not line.strip() or line.startswith(("===", "  Total Execution",
                                                                 "  ----"))):
            continue
        else:
            other.append(line)
    return rows, "".join(other)


def _name_rows(pipeline: str, report: list[tuple[int, str, float]]) -> list[tuple[int, str, float]]:
    """Report rows renamed after the pipeline's pass names (MLIR reports class
    names such as ConvertGpuOpsToNVVMOps); its own names where the two differ
    in shape (then the report is shown as MLIR wrote it). A pipeline that
    failed reports the passes that ran: a prefix of the pipeline's."""
    passes = pipeline_passes(pipeline)[:len(report)]
    if [d for d, _ in passes] != [d for d, _, _ in report]:
        return report
    return [(d, name, s) for (d, name), (_, _, s) in zip(passes, report)]


def _destroy_capturing_stderr(holder: list) -> str:
    """Drops the last reference to the pass manager in `holder` with stderr
    (fd 2) sent to a temporary file, and returns what was written there."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            holder.clear()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        return tmp.read().decode(errors="replace")


def run_with_pass_timing(pm, operation, pipeline: str) -> None:
    """Runs `pm` on `operation` with MLIR's pass timing, adding one row per
    pass (named as in `pipeline`) under the current stage. Takes over `pm`:
    the caller must hold no other reference to it."""
    holder = [pm]
    del pm
    holder[0].enable_timing()
    try:
        holder[0].run(operation)
    finally:
        text = _destroy_capturing_stderr(holder)
        report, other = parse_pass_report(text)
        if other.strip():
            sys.stderr.write(other)
        timings = active()
        if timings is not None:
            for depth, name, seconds in _name_rows(pipeline, report):
                timings.rows.append(Row(name, timings.depth + depth, seconds))


def run_timed(main, argv: list[str], title: str) -> int | None:
    """`tlc ... --time-passes`: runs `main(argv)` in a timing session and
    returns its exit status; None when called from inside that session
    (then the caller goes on with the command itself)."""
    if active() is not None:
        return None
    with session(title):
        with stage("import the compiler (MLIR bindings)"):  # what the command imports first
            import tlc.compiler  # noqa: F401
        return main(argv)
