"""Kubernetes' lists library (k8s.io/apiserver pkg/cel/library/lists.go): isSorted, sum, min, max, indexOf, includes."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kcel.checker.types import (
    BOOL,
    BYTES,
    DOUBLE,
    DURATION,
    DYN,
    INT,
    STRING,
    TIMESTAMP,
    UINT,
    A,
    CelType,
    list_of,
)
from kcel.errors import EvalError
from kcel.eval.arithmetic import add_int64, add_uint64
from kcel.eval.equality import cel_equals
from kcel.libs import UNIT, CallEstimate, CallSite, Estimate, Library, Overload
from kcel.libs.timestamps import add_duration_duration, add_duration_timestamp, add_timestamp_duration
from kcel.temporal import Duration, Timestamp
from kcel.values import Uint

__all__ = ["COMPARABLE", "LIBRARY", "SUMMABLE", "library", "traversal_cost", "traversal_estimate"]

COMPARABLE: tuple[tuple[str, CelType], ...] = (
    ("int", INT), ("uint", UINT), ("double", DOUBLE), ("bool", BOOL), ("duration", DURATION),
    ("timestamp", TIMESTAMP), ("string", STRING), ("bytes", BYTES),
)  # fmt: skip
"""Kubernetes' comparableTypes, in its order: the `<t>` of the isSorted/min/max overload ids."""

SUMMABLE: tuple[tuple[str, CelType], ...] = (("int", INT), ("uint", UINT), ("double", DOUBLE), ("duration", DURATION))

_SUM_ZEROS: dict[str, Any] = {"int": 0, "uint": Uint(0), "double": 0.0, "duration": Duration(0)}
_ZEROS: dict[type, Any] = {type(zero): zero for zero in _SUM_ZEROS.values()}
_COMPARERS = (bool, int, float, str, bytes, Timestamp, Duration)  # cel-go's traits.Comparer values
_STRING_TRAVERSAL_FACTOR = 0.1  # common.StringTraversalCostFactor
_ABSENT: Any = object()


# -- comparison --------------------------------------------------------------------------------


def _require_comparer(value: Any) -> Any:
    if not isinstance(value, _COMPARERS):
        raise EvalError("no such overload")
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _compare(a: Any, b: Any) -> int | None:
    """cel-go's Compare: -1, 0 or 1, or None where it returns an error (NaN, or values of unlike types).

    The callers ignore those errors, as Kubernetes does: only a result of exactly 1 or -1 counts.
    """
    if _is_number(a) and _is_number(b):
        if (isinstance(a, float) and math.isnan(a)) or (isinstance(b, float) and math.isnan(b)):
            return None
        if isinstance(a, float) or isinstance(b, float):  # an int meets a double as a double
            a, b = float(a), float(b)
    elif type(a) is not type(b) and not (isinstance(a, str) and isinstance(b, str)):
        return None
    return int((a > b) - (a < b))


def list_is_sorted(values: Sequence[Any]) -> bool:
    """False as soon as one element compares greater than the next."""
    previous = _ABSENT
    for value in values:
        _require_comparer(value)
        if previous is not _ABSENT and _compare(previous, value) == 1:
            return False
        previous = value
    return True


def _extreme(function: str, replace_when: int) -> Callable[[Sequence[Any]], Any]:
    """min (replace while the best so far compares 1) or max (-1); the first of equal elements wins."""

    def extreme(values: Sequence[Any]) -> Any:
        best = _ABSENT
        for value in values:
            _require_comparer(value)
            if best is _ABSENT or _compare(best, value) == replace_when:
                best = value
        if best is _ABSENT:
            raise EvalError(f"{function} called on empty list")
        return best

    return extreme


list_min = _extreme("min", 1)
list_max = _extreme("max", -1)


# -- sum ---------------------------------------------------------------------------------------

_ADDERS: dict[tuple[type, type], Callable[[Any, Any], Any]] = {
    (int, int): add_int64, (Uint, Uint): add_uint64, (float, float): operator.add,
    (Duration, Duration): add_duration_duration, (Duration, Timestamp): add_duration_timestamp,
    (Timestamp, Duration): add_timestamp_duration,
}  # fmt: skip


def _add(total: Any, value: Any) -> Any:
    """cel-go's Adder.Add: like types only (a duration may meet a timestamp), overflow checked."""
    adder = _ADDERS.get((type(total), type(value)))
    if adder is None:
        raise EvalError("no such overload")
    return adder(total, value)


def _sum(zero: Any) -> Callable[[Sequence[Any]], Any]:
    """Start from the zero of the element type and add every element.

    The zero comes from the first element, because for a `dyn` list cel-go picks the overload
    whose type that element has; an empty list gives the overload's own zero.
    """

    def list_sum(values: Sequence[Any]) -> Any:
        if not values:
            return zero
        total = _ZEROS.get(type(values[0]), _ABSENT)
        if total is _ABSENT:
            raise EvalError("no such overload")
        for value in values:
            total = _add(total, value)
        return total

    return list_sum


# -- indexOf, lastIndexOf, includes ------------------------------------------------------------


def list_index_of(values: Sequence[Any], item: Any) -> int:
    return next((i for i, value in enumerate(values) if cel_equals(value, item)), -1)


def list_last_index_of(values: Sequence[Any], item: Any) -> int:
    return next((i for i in range(len(values) - 1, -1, -1) if cel_equals(values[i], item)), -1)


def list_includes(target: Any, item: Any) -> bool:
    """An element of a list equals the item, or any other receiver itself equals it ('a'.includes('a'))."""
    if isinstance(target, (list, tuple)):
        return any(cel_equals(value, item) for value in target)
    return cel_equals(target, item)


# -- costs -------------------------------------------------------------------------------------


def traversal_cost(value: Any) -> int:
    """Kubernetes' traversalCost: a tenth of each string's or bytes' length (truncated), 1 per other leaf.

    >>> traversal_cost(["abcdefghijkl", 1, {"k": True}])
    3
    """
    if isinstance(value, str):
        return int(len(value.encode("utf-8", "surrogatepass")) * _STRING_TRAVERSAL_FACTOR)
    if isinstance(value, bytes):
        return int(len(value) * _STRING_TRAVERSAL_FACTOR)
    if isinstance(value, (list, tuple)):
        return sum(map(traversal_cost, value))
    if isinstance(value, Mapping):
        return sum(traversal_cost(key) + traversal_cost(item) for key, item in value.items())
    return 1


def _runtime_cost(args: Sequence[Any], result: Any) -> int:
    """CallCost for all seven functions: one traversal of the receiver."""
    return traversal_cost(args[0])


def traversal_estimate(function: str) -> Estimate:
    """Kubernetes' EstimateCallCost for these functions, from the receiver's checked type.

    A receiver whose type has parameters (a list) costs 1 per element, plus a tenth of the element's
    size when its element type is string or bytes. Any other receiver (a string, `dyn`) costs its size
    for `includes` and a tenth of it otherwise (the strings extension's indexOf falls in here too,
    since Kubernetes goes by function name).
    """

    def estimate(call: CallSite) -> CallEstimate:
        receiver, receiver_type = call.size(0), call.type(0)
        if receiver_type.params:
            per_element = UNIT
            if receiver_type.params[0].name in ("string", "bytes"):
                per_element = per_element.add(call.element_size(0).times(_STRING_TRAVERSAL_FACTOR))
            return CallEstimate(receiver.cost(per_element))
        if function == "includes":
            return CallEstimate(receiver.cost(UNIT))
        return CallEstimate(receiver.times(_STRING_TRAVERSAL_FACTOR))

    return estimate


# -- the table ---------------------------------------------------------------------------------


def _member(oid: str, function: str, args: tuple[CelType, ...], result: CelType, impl: Any, doc: str) -> Overload:
    """A member overload whose runtime cost is one traversal of the receiver."""
    estimate = traversal_estimate(function)
    return Overload(oid, function, args, result, impl, member=True, cost=_runtime_cost, doc=doc, estimate=estimate)


def _typed_overloads() -> list[Overload]:
    table = [_member(f"list_{name}_is_sorted_bool", "isSorted", (list_of(t),), BOOL, list_is_sorted,
                     "[1, 2, 2].isSorted()") for name, t in COMPARABLE]  # fmt: skip
    table += [_member(f"list_{name}_sum_{name}", "sum", (list_of(t),), t, _sum(_SUM_ZEROS[name]),
                      "[1, 3].sum() == 4") for name, t in SUMMABLE]  # fmt: skip
    table += [_member(f"list_{name}_max_{name}", "max", (list_of(t),), t, list_max, "[1, 3].max() == 3")
              for name, t in COMPARABLE]  # fmt: skip
    table += [_member(f"list_{name}_min_{name}", "min", (list_of(t),), t, list_min, "[1, 3].min() == 1")
              for name, t in COMPARABLE]  # fmt: skip
    return table


VERSION_0 = (
    *_typed_overloads(),
    _member("list_a_index_of_int", "indexOf", (list_of(A), A), INT, list_index_of, "[1, 2, 2].indexOf(2) == 1"),
    _member("list_a_last_index_of_int", "lastIndexOf", (list_of(A), A), INT, list_last_index_of,
            "['a', 'b', 'b'].lastIndexOf('b') == 2"),
)  # fmt: skip
VERSION_1 = (_member("list_includes_dyn_dyn", "includes", (DYN, DYN), BOOL, list_includes, "[1, 2, 3].includes(2)"),)


def library(version: int = 1) -> Library:
    """The library at a Kubernetes `ListsVersion`: 0 (until 1.37) or 1, which adds `includes`.

    >>> [o.id for o in library(1).overloads if o.function == "includes"]
    ['list_includes_dyn_dyn']
    """
    return Library("kubernetes.lists", overloads=VERSION_0 + (VERSION_1 if version >= 1 else ()))


LIBRARY = library(1)
