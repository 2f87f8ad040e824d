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

    def insert(self, at: int, texts: list[str]) -> None:
        """Insert lines at an earlier mark, at the current depth (the mark's depth)."""
        self.lines[at:at] = ["    " * self.depth + text for text in texts]

    def source(self) -> str:
        return "\n".join(self.lines)
