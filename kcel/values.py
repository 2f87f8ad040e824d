"""Runtime value classes for the CEL types that have no plain Python counterpart."""

from __future__ import annotations


class Uint(int):
    """A CEL `uint`: an `int` that remembers it is unsigned (`1u`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"{int(self)}u"

    __str__ = __repr__
