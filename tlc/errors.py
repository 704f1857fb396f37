"""Errors tlc reports to users (no compiler import needed)."""

from __future__ import annotations

import linecache
from dataclasses import dataclass, field


@dataclass
class SourceLocation:
    """A position in the user's source: file, 1-based line and column."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass
class Diagnostic:
    """One message, with where it points and the notes attached to it."""

    message: str
    location: SourceLocation | None = None
    notes: list[Diagnostic] = field(default_factory=list)
    severity: str = "error"

    def render(self) -> str:
        head = f"{self.location}: " if self.location else ""
        lines = [f"{head}{self.severity}: {self.message}"]
        lines += _source_excerpt(self.location)
        for note in self.notes:
            lines.append(note.render())
        return "\n".join(lines)


def _source_excerpt(location: SourceLocation | None) -> list[str]:
    """The source line and a caret under the column, when the file is readable."""
    if location is None or location.line <= 0:
        return []
    text = linecache.getline(location.file, location.line)
    if not text:
        return []
    text = text.rstrip("\n")
    return [f"  {text}", "  " + " " * max(location.col - 1, 0) + "^"]


class CompilationError(Exception):
    """A program tlc cannot compile, with messages that point at its source."""

    def __init__(self, diagnostics: list[Diagnostic] | str):
        if isinstance(diagnostics, str):
            diagnostics = [Diagnostic(diagnostics)]
        self.diagnostics = diagnostics
        super().__init__("\n".join(d.render() for d in diagnostics))

    @property
    def location(self) -> SourceLocation | None:
        """Where the first error points."""
        return self.diagnostics[0].location if self.diagnostics else None
