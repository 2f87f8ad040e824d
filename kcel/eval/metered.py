"""Operators whose runtime cost depends on their operands, for metered programs (cel-go's tracker)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from kcel.eval import runtime
from kcel.eval.dispatch import Meter
from kcel.eval.sizes import actual_size


def _tenth_of_smaller(a: Any, b: Any) -> int:
    return math.ceil(min(actual_size(a), actual_size(b)) * 0.1)


def _is_text(a: Any, b: Any) -> bool:
    return (type(a) is str and type(b) is str) or (type(a) is bytes and type(b) is bytes)


def add(meter: Meter, a: Any, b: Any) -> Any:
    result = runtime.add(a, b)
    meter.add(math.ceil((len(a) + len(b)) * 0.1) if _is_text(a, b) else 1)
    return result


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
        result = compare(a, b)
        meter.add(_tenth_of_smaller(a, b) if _is_text(a, b) else 1)
        return result

    return metered


less = _ordering(runtime.less)
less_equals = _ordering(runtime.less_equals)
greater = _ordering(runtime.greater)
greater_equals = _ordering(runtime.greater_equals)


def in_container(meter: Meter, item: Any, container: Any) -> bool:
    result = runtime.in_container(item, container)
    meter.add(1 if isinstance(container, Mapping) else len(container))
    return result
