"""Operators whose runtime cost depends on their operands, for metered programs (cel-go's tracker)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from kcel.eval import runtime
from kcel.eval.dispatch import Meter
from kcel.eval.sizes import actual_size


def _size(value: Any) -> int:
    return 1 if isinstance(value, BaseException) else actual_size(value)  # a failed operand counts as 1


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


def equals(meter: Meter, a: Any, b: Any) -> bool:
    meter.add(_tenth_of_smaller(a, b))
    return runtime.equals(a, b)


def equals_by(meter: Meter, equals: Callable[[Any, Any], bool], a: Any, b: Any) -> bool:
    """`==` decided by a type's own equality (a Kubernetes schema object), costed as any `==`."""
    meter.add(_tenth_of_smaller(a, b))
    return equals(a, b)


def not_equals(meter: Meter, a: Any, b: Any) -> bool:
    meter.add(_tenth_of_smaller(a, b))
    return runtime.not_equals(a, b)


def _ordering(compare: Callable[[Any, Any], bool]) -> Callable[[Meter, Any, Any], bool]:
    """`<`, `<=`, `>`, `>=`: strings and bytes cost by length, everything else 1."""

    def metered(meter: Meter, a: Any, b: Any) -> bool:
        meter.add(ordering_cost(a, b))
        return compare(a, b)

    return metered


def ordering_cost(a: Any, b: Any) -> int:
    return _tenth_of_smaller(a, b) if _is_text(a, b) else 1


def equality_cost(a: Any, b: Any) -> int:
    return _tenth_of_smaller(a, b)


less = _ordering(runtime.less)
less_equals = _ordering(runtime.less_equals)
greater = _ordering(runtime.greater)
greater_equals = _ordering(runtime.greater_equals)


def in_cost(item: Any, container: Any) -> int:
    return 1 if isinstance(container, (Mapping, BaseException)) else len(container)


def in_container(meter: Meter, item: Any, container: Any) -> bool:
    meter.add(in_cost(item, container))
    return runtime.in_container(item, container)


OPERATOR_COSTS: dict[str, Callable[[tuple[Any, ...], Any], int]] = {
    "_+_": lambda args, result: add_cost(*args),
    "_==_": lambda args, result: equality_cost(*args),
    "_!=_": lambda args, result: equality_cost(*args),
    "_<_": lambda args, result: ordering_cost(*args),
    "_<=_": lambda args, result: ordering_cost(*args),
    "_>_": lambda args, result: ordering_cost(*args),
    "_>=_": lambda args, result: ordering_cost(*args),
    "@in": lambda args, result: in_cost(*args),
}
"""Each sized operator's cost as a `(args, result)` function, for a call whose operand failed."""
