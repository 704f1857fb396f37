"""Test files mark the lines errors must name with a trailing `# E:<marker>`
comment; these find them and check an error's location against them."""

from __future__ import annotations


def line_of(lines: list[str], marker: str) -> int:
    """The one line (from 1) of `lines` that ends with `# E:<marker>`."""
    hits = [n for n, text in enumerate(lines, 1) if text.rstrip().endswith(f"# E:{marker}")]
    assert len(hits) == 1, marker
    return hits[0]


def assert_error_at(error, path: str, lines: list[str], marker: str, at: str,
                    message: str) -> None:
    """`error` (a tlc.CompilationError) names `path`, the line marked `marker`
    and the column where `at` starts there, says `message`, and shows no
    traceback."""
    line = line_of(lines, marker)
    col = lines[line - 1].find(at) + 1
    assert col > 0, (marker, at)
    assert (error.location.file, error.location.line, error.location.col) == (path, line, col), \
        str(error)
    assert message in str(error) and "Traceback" not in str(error), str(error)
