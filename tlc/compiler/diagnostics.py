"""MLIR diagnostics -> tlc.CompilationError naming the user's file:line:col."""

from __future__ import annotations

import re

from ..errors import CompilationError, Diagnostic, SourceLocation

_FILE_LINE_COL = re.compile(r'"(?P<file>[^"]*)":(?P<line>\d+):(?P<col>\d+)')


def source_location(loc, buffer_name: str = "-") -> SourceLocation | None:
    """The first file:line:col inside an MLIR location (callsite, fused, named).

    Text parsed from a string carries the buffer name "-"; `buffer_name`
    replaces it with the file the text came from.
    """
    match = _FILE_LINE_COL.search(str(loc))
    if not match:
        return None
    file = buffer_name if match["file"] == "-" else match["file"]
    return SourceLocation(file, int(match["line"]), int(match["col"]))


def _convert(diag, buffer_name: str, severity: str = "error") -> Diagnostic:
    notes = [_convert(n, buffer_name, "note") for n in getattr(diag, "notes", [])]
    # MLIR's "see current operation: <IR dump>" notes help compiler authors,
    # not users: keep them out of the message.
    notes = [n for n in notes if not n.message.startswith("see current operation")]
    return Diagnostic(
        str(diag.message), source_location(diag.location, buffer_name), notes, severity
    )


def compilation_error(mlir_error, fallback: str, buffer_name: str = "-") -> CompilationError:
    """Turns an MLIRError raised by parsing, verifying or a pass into a user error."""
    diagnostics = [
        _convert(d, buffer_name) for d in getattr(mlir_error, "error_diagnostics", [])
    ]
    if not diagnostics:
        diagnostics = [Diagnostic(fallback)]
    return CompilationError(diagnostics)
