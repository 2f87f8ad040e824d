"""Operators whose runtime cost depends on their operands, for metered programs (cel-go's tracker)."""

from __future__ import annotations

import math
from collections.abc import Mapping
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


def not_equals(meter: Meter, a: Any, b: Any) -> bool:
    meter.add(_tenth_of_smaller(a, b))
    return runtime.not_equals(a, b)


def _compare(meter: Meter, a: Any, b: Any) -> None:
    meter.add(_tenth_of_smaller(a, b) if _is_text(a, b) else 1)


def less(meter: Meter, a: Any, b: Any) -> bool:
    result = runtime.less(a, b)
    _compare(meter, a, b)
    return result


def less_equals(meter: Meter, a: Any, b: Any) -> bool:
    result = runtime.less_equals(a, b)
    _compare(meter, a, b)
    return result


def greater(meter: Meter, a: Any, b: Any) -> bool:
    result = runtime.greater(a, b)
    _compare(meter, a, b)
    return result


def greater_equals(meter: Meter, a: Any, b: Any) -> bool:
    result = runtime.greater_equals(a, b)
    _compare(meter, a, b)
    return result


def in_container(meter: Meter, item: Any, container: Any) -> bool:
    result = runtime.in_container(item, container)
    meter.add(1 if isinstance(container, Mapping) else len(container))
    return result
