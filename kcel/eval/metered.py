"""Operators whose runtime cost depends on their operands, for metered programs (cel-go's tracker)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sized
from typing import Any

from kcel.eval import runtime
from kcel.eval.dispatch import Meter
from kcel.eval.sizes import actual_size
from kcel.values import Optional

# Kubernetes' CallCost for `_==_` (apiserver pkg/cel/library/cost.go): 1 when the left operand is one of its
# values, whatever the sizes (an IPv6 address has 16); `!=` has no such case.
_KUBERNETES_EQUALITY = frozenset((
    "kubernetes.Quantity", "net.IP", "net.CIDR", "kubernetes.NamedFormat", "kubernetes.URL", "kubernetes.Semver",
    "kubernetes.authorization.Authorizer", "kubernetes.authorization.PathCheck",
    "kubernetes.authorization.GroupCheck", "kubernetes.authorization.ResourceCheck",
    "kubernetes.authorization.Decision",
))  # fmt: skip


def _size(value: Any) -> int:
    """cel-go's interpreter actualSize: an optional counts as its value; a failed operand counts as 1."""
    if isinstance(value, BaseException):
        return 1
    while isinstance(value, Optional) and value.has_value():
        value = value.value
    return actual_size(value)


def _tenth_of_smaller(a: Any, b: Any) -> int:
    return math.ceil(min(_size(a), _size(b)) * 0.1)


def _is_text(a: Any, b: Any) -> bool:
    """Both operands text, or one text and the other failed (the checker chose the string overload)."""
    kinds = (type(a), type(b))
    return kinds in ((str, str), (bytes, bytes)) or (
        isinstance(a, BaseException) != isinstance(b, BaseException) and (str in kinds or bytes in kinds)
    )


def add_cost(a: Any, b: Any) -> int:
    return math.ceil((_size(a) + _size(b)) * 0.1) if _is_text(a, b) else 1


def add(meter: Meter, a: Any, b: Any) -> Any:
    meter.add(add_cost(a, b))  # charged even when the addition fails (an overflow)
    return runtime.add(a, b)


def text_add_cost(a: Any, b: Any) -> int:
    """`+` the checker pinned to add_string or add_bytes: the operands' sizes, whatever they turn out to be (1 for
    one without a size)."""
    return math.ceil((_size(a) + _size(b)) * 0.1)


def add_text(meter: Meter, a: Any, b: Any) -> Any:
    meter.add(text_add_cost(a, b))
    return runtime.add(a, b)


def equals(meter: Meter, a: Any, b: Any) -> bool:
    meter.add(equality_cost(a, b))
    return runtime.equals(a, b)


def equals_by(meter: Meter, equals: Callable[[Any, Any], bool], a: Any, b: Any) -> bool:
    """`==` decided by a type's own equality (a Kubernetes schema object), costed as any `==`."""
    meter.add(_tenth_of_smaller(a, b))
    return equals(a, b)


def not_equals(meter: Meter, a: Any, b: Any) -> bool:
    meter.add(_tenth_of_smaller(a, b))
    return runtime.not_equals(a, b)


def _ordering(
    compare: Callable[[Any, Any], bool], cost: Callable[[Any, Any], int]
) -> Callable[[Meter, Any, Any], bool]:
    """`<`, `<=`, `>`, `>=` at a cost."""

    def metered(meter: Meter, a: Any, b: Any) -> bool:
        meter.add(cost(a, b))
        return compare(a, b)

    return metered


def ordering_cost(a: Any, b: Any) -> int:
    """Strings and bytes cost by length, everything else 1 (the overload found when running)."""
    return _tenth_of_smaller(a, b) if _is_text(a, b) else 1


def equality_cost(a: Any, b: Any) -> int:
    if getattr(a, "cel_type_name", None) in _KUBERNETES_EQUALITY:
        return 1
    return _tenth_of_smaller(a, b)


def inequality_cost(a: Any, b: Any) -> int:
    return _tenth_of_smaller(a, b)


less = _ordering(runtime.less, ordering_cost)
less_equals = _ordering(runtime.less_equals, ordering_cost)
greater = _ordering(runtime.greater, ordering_cost)
greater_equals = _ordering(runtime.greater_equals, ordering_cost)
# The checker pinned the string (bytes) overload: cel-go prices by the operands' sizes whatever they turn out to be.
less_text = _ordering(runtime.less, _tenth_of_smaller)
less_equals_text = _ordering(runtime.less_equals, _tenth_of_smaller)
greater_text = _ordering(runtime.greater, _tenth_of_smaller)
greater_equals_text = _ordering(runtime.greater_equals, _tenth_of_smaller)


def in_cost(item: Any, container: Any) -> int:
    """A list's size; 1 for a map and for what has no size (cel-go's actualSize), such as a failed operand."""
    return len(container) if isinstance(container, Sized) and not isinstance(container, Mapping) else 1


def optional_qualifier(meter: Meter, qualify: Callable[..., Optional], *args: Any) -> Optional:
    """An optional selection or index: cel-go observes the qualifier only when the value is present
    (evalWatchConstQual.QualifyIfPresent); an absent one, or one that fails, costs nothing."""
    found = qualify(*args)
    if found.has_value():
        meter.add(1)
    return found


def charged_if_found(meter: Meter, found: bool) -> bool:
    """A presence test on an optional (`has(x.?a.b)`): cel-go observes the tested qualifier when it found the field."""
    if found:
        meter.add(1)
    return found


def force_read(meter: Meter, cell: runtime.Lazy) -> Any:
    """A lazy local's read (a bind, a block slot): cel-go observes it once its value is known, an error included."""
    return runtime.charge(meter, _one, runtime.force, (cell,))


def _one(args: tuple[Any, ...], result: Any) -> int:
    return 1


def in_container(meter: Meter, item: Any, container: Any) -> bool:
    """Charged whatever the test gives, unless it panics in cel-go (a bytes item in a map), ending the evaluation."""
    return runtime.charge(meter, OPERATOR_COSTS["in_container"], runtime.in_container, (item, container))  # type: ignore[no-any-return]


OPERATOR_COSTS: dict[str, Callable[[tuple[Any, ...], Any], int]] = {
    "add": lambda args, result: add_cost(*args),
    "add_text": lambda args, result: text_add_cost(*args),
    "equals": lambda args, result: equality_cost(*args),
    "not_equals": lambda args, result: inequality_cost(*args),
    "less": lambda args, result: ordering_cost(*args),
    "less_equals": lambda args, result: ordering_cost(*args),
    "greater": lambda args, result: ordering_cost(*args),
    "greater_equals": lambda args, result: ordering_cost(*args),
    **dict.fromkeys(
        ("less_text", "less_equals_text", "greater_text", "greater_equals_text"),
        lambda args, result: _tenth_of_smaller(*args),
    ),  # fmt: skip
    "in_container": lambda args, result: in_cost(*args),
}
"""Each sized operator's cost as a `(args, result)` function, by its helper's name, for a call whose operand
failed."""
