"""The error the interpreter raises, pointing at the user's source."""

from __future__ import annotations

from ..errors import Diagnostic, SourceLocation


class InterpreterError(RuntimeError):
    """A tile program did something the interpreter catches: an access outside
    a buffer, a read of shared memory no thread has written, an op or an
    argument it cannot run. The message names the op's file:line:col, shows
    the source line, and says which block of the grid was running."""

    def __init__(self, message: str, location: SourceLocation | None = None):
        self.diagnostic = Diagnostic(message, location)
        super().__init__(self.diagnostic.render())

    @property
    def location(self) -> SourceLocation | None:
        return self.diagnostic.location


class Site:
    """Where an op is: its name and its user location (for messages)."""

    __slots__ = ("op_name", "location")

    def __init__(self, op_name: str, location: SourceLocation | None):
        self.op_name = op_name
        self.location = location

    def error(self, message: str, block=None) -> InterpreterError:
        where = f" in block {format_block(block)}" if block is not None else ""
        return InterpreterError(f"{self.op_name}{where}: {message}", self.location)


def format_block(block) -> str:
    return "(" + ", ".join(str(b) for b in block) + ")"
