"""cel-go's sets extension: `sets.contains`, `sets.equivalent`, `sets.intersects` over lists with CEL equality."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from kcel.checker.types import BOOL, T, list_of
from kcel.eval.equality import cel_equals
from kcel.eval.sizes import actual_size
from kcel.libs import UNIT, CallEstimate, CallSite, Estimate, Library, Overload, RuntimeCost
from kcel.values import UINT64_MAX

__all__ = ["LIBRARY", "Members"]

_NO_BUCKET = ("other",)


def _bucket(value: Any) -> tuple[Any, ...]:
    """A hash key that never separates values CEL calls equal (1, 1u and 1.0 share one); `cel_equals` decides within."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float)):
        return ("number", float(value))
    if isinstance(value, str):
        return ("string", value)
    if isinstance(value, bytes):
        return ("bytes", value)
    return _NO_BUCKET


class Members:
    """The distinct values seen so far, answering CEL-equality membership in O(1) for scalars.

    >>> m = Members([1, "a"])
    >>> m.contains(1.0), m.contains(True)
    (True, False)
    """

    __slots__ = ("_buckets",)

    def __init__(self, values: Iterable[Any] = ()) -> None:
        self._buckets: dict[tuple[Any, ...], list[Any]] = {}
        for value in values:
            self.add(value)

    def contains(self, value: Any) -> bool:
        found = self._buckets.get(_bucket(value))
        return found is not None and any(cel_equals(value, member) for member in found)

    def add(self, value: Any) -> None:
        self._buckets.setdefault(_bucket(value), []).append(value)


def _contains_all(values: Sequence[Any], sublist: Sequence[Any]) -> bool:
    if not sublist:
        return True
    members = Members(values)
    return all(members.contains(value) for value in sublist)


def list_sets_contains_list(values: Sequence[Any], sublist: Sequence[Any]) -> bool:
    """Every element of `sublist` is in `values` (the empty list is contained in any list)."""
    return _contains_all(values, sublist)


def list_sets_equivalent_list(a: Sequence[Any], b: Sequence[Any]) -> bool:
    """Each list contains the other; duplicates and order do not matter."""
    return _contains_all(a, b) and _contains_all(b, a)


def list_sets_intersects_list(a: Sequence[Any], b: Sequence[Any]) -> bool:
    if not a or not b:
        return False
    members = Members(b)
    return any(members.contains(value) for value in a)


def _sets_cost(factor: float) -> RuntimeCost:
    """cel-go's trackSetsCost: 1 + floor(size(a) * size(b) * factor)."""

    def cost(args: Sequence[Any], result: Any) -> int:
        product = actual_size(args[0]) * actual_size(args[1])
        return 1 + min(int(float(product) * factor), UINT64_MAX)

    return cost


def _sets_estimate(factor: float) -> Estimate:
    """cel-go's estimateSetsCost: size(a) * size(b) * factor + 1."""

    def estimate(call: CallSite) -> CallEstimate:
        return CallEstimate(call.size(0).multiply(call.size(1)).times(factor).add(UNIT))

    return estimate


def _overload(name: str, impl: Callable[..., bool], factor: float, doc: str) -> Overload:
    args = (list_of(T), list_of(T))
    return Overload(f"list_sets_{name}_list", f"sets.{name}", args, BOOL, impl, cost=_sets_cost(factor),
                    estimate=_sets_estimate(factor), doc=doc)  # fmt: skip


OVERLOADS: tuple[Overload, ...] = (
    _overload("contains", list_sets_contains_list, 1, "sets.contains([1, 2, 3], [2.0]) == true"),
    # equivalence may need two m*n passes, one for each direction.
    _overload("equivalent", list_sets_equivalent_list, 2, "sets.equivalent([1, 1], [1u]) == true"),
    _overload("intersects", list_sets_intersects_list, 1, "sets.intersects([1], [2, 1.0]) == true"),
)

LIBRARY = Library("sets", overloads=OVERLOADS)
