"""Runtime value classes for the CEL types that have no plain Python counterpart.

Evaluation works on plain Python data (see ARCHITECTURE.md); only `uint`, `optional`, type
values, timestamps and durations (kcel.temporal) and the Kubernetes types need classes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
UINT64_MAX = 2**64 - 1


class Uint(int):
    """A CEL `uint`: an `int` that remembers it is unsigned (`1u`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"{int(self)}u"

    __str__ = __repr__


_ABSENT: Any = object()


@dataclass(frozen=True, slots=True)
class Optional:
    """A CEL `optional_type` value: `optional.of(v)` or `optional.none()`."""

    value: Any = _ABSENT

    def has_value(self) -> bool:
        return self.value is not _ABSENT

    def __repr__(self) -> str:
        return f"optional.of({self.value!r})" if self.has_value() else "optional.none()"


NONE = Optional()


@dataclass(frozen=True, slots=True)
class TypeValue:
    """A CEL type used as a value: what `type(x)` returns and what `int` names."""

    name: str

    def __repr__(self) -> str:
        return self.name


class TypedList(list[Any]):
    """A list whose `==` and `+` follow its own rules (Kubernetes `x-kubernetes-list-type` set/map lists).

    Everything else (indexing, iteration, `size`) is a plain list. Subclasses implement
    `cel_equals` and `cel_add`; the runtime calls them when such a list is the left operand.
    """

    __slots__ = ()

    def cel_equals(self, other: Any) -> bool:
        raise NotImplementedError

    def cel_add(self, other: Any) -> list[Any]:
        raise NotImplementedError
