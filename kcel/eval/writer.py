"""A minimal code writer: indented lines, with the ability to insert at an earlier mark."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


class Writer:
    def __init__(self, depth: int = 1) -> None:
        self.lines: list[str] = []
        self.depth = depth

    def line(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    @contextmanager
    def indent(self) -> Iterator[None]:
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    def mark(self) -> int:
        return len(self.lines)

    def cut(self, at: int) -> list[str]:
        """Remove and return the lines written since a mark, to be written again elsewhere (`nest`)."""
        lines = self.lines[at:]
        del self.lines[at:]
        return lines

    def nest(self, lines: list[str]) -> None:
        """Write lines that were `cut` one level deeper than they were written (generated lines hold no newline of
        their own: user text enters the source through `repr`)."""
        self.lines += ["    " + line for line in lines]

    def insert(self, at: int, texts: list[str]) -> None:
        """Insert lines at an earlier mark, at the current depth (the mark's depth)."""
        self.lines[at:at] = ["    " * self.depth + text for text in texts]

    def source(self) -> str:
        return "\n".join(self.lines)
