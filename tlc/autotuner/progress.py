"""A one-line progress display on stderr: rewritten in place on a terminal,
one line per phase otherwise (logs stay readable)."""

from __future__ import annotations

import sys


class Progress:
    def __init__(self, label: str, total: int):
        self.label, self.total = label, total
        self.tty = sys.stderr.isatty()
        self.phase = None

    def update(self, phase: str, done: int) -> None:
        line = f"{self.label}: {phase} {done}/{self.total}"
        if self.tty:
            sys.stderr.write("\r" + line)
            sys.stderr.flush()
        elif done == self.total:
            print(line, file=sys.stderr)
        self.phase = phase

    def done(self) -> None:
        if self.tty:
            sys.stderr.write("\n")
            sys.stderr.flush()
