"""CEL equality and ordering on runtime values (cel-spec "Equality" and cross-type numerics).

Python's `==` is close but wrong in three ways CEL cares about: `True == 1`, `[1] == (1,)`
vs. CEL's typed lists, and NaN. These functions are what generated code calls whenever the
operand types are not known statically.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kcel.errors import EvalError
from kcel.values import TypedList

_NUMERIC = (int, float)


def cel_equals(a: Any, b: Any) -> bool:
    """`a == b` under CEL's heterogeneous equality: numbers compare by value, nothing errors."""
    if a is None or b is None:
        return a is b
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, _NUMERIC) and isinstance(b, _NUMERIC):
        if type(a) is float or type(b) is float:
            return float(a) == float(b)  # cel-go compares a mixed pair as doubles
        return a == b
    if isinstance(a, str):
        return isinstance(b, str) and a == b
    if isinstance(a, bytes):
        return isinstance(b, bytes) and a == b
    if isinstance(a, Mapping):
        return isinstance(b, Mapping) and _maps_equal(a, b)
    if isinstance(a, TypedList):
        return a.cel_equals(b)
    if isinstance(a, Sequence):
        return (
            isinstance(b, Sequence)
            and not isinstance(b, (str, bytes))
            and len(a) == len(b)
            and all(cel_equals(x, y) for x, y in zip(a, b, strict=True))
        )
    if type(a) is not type(b):
        equals = getattr(a, "cel_equals", None)
        return bool(equals(b)) if equals is not None else False
    return bool(a == b)


def _maps_equal(a: Mapping[Any, Any], b: Mapping[Any, Any]) -> bool:
    if len(a) != len(b):
        return False
    for key, value in a.items():
        found, other = map_lookup(b, key)
        if not found or not cel_equals(value, other):
            return False
    return True


def map_lookup(m: Mapping[Any, Any], key: Any) -> tuple[bool, Any]:
    """Find a key the CEL way: `true` never finds `1`, and 1, 1u and 1.0 find each other."""
    if isinstance(key, bool):
        return next(((True, v) for k, v in m.items() if k is key), (False, None))
    try:
        value = m[key]
    except (KeyError, TypeError):
        pass
    else:
        # A Python dict answers the key 1 with the entry of `True`; CEL must not.
        if not (key in (0, 1) and isinstance(key, _NUMERIC) and any(k is (key == 1) for k in m)):
            return True, value
    if isinstance(key, int) or (isinstance(key, float) and key.is_integer()):
        for k, v in m.items():
            if isinstance(k, _NUMERIC) and not isinstance(k, bool) and k == key:
                return True, v
    return False, None


def cel_compare(a: Any, b: Any) -> int:
    """-1, 0 or 1 for values CEL can order; `no such overload` for any other pair.

    NaN compares as unordered: callers of `<`, `<=`, `>`, `>=` get False via `cel_less`.
    """
    if isinstance(a, bool) or isinstance(b, bool):
        if isinstance(a, bool) and isinstance(b, bool):
            return (a > b) - (a < b)
        raise EvalError("no such overload")
    if isinstance(a, _NUMERIC) and isinstance(b, _NUMERIC):
        return (a > b) - (a < b)
    if type(a) is type(b) or (isinstance(a, str) and isinstance(b, str)):
        try:
            return int((a > b) - (a < b))
        except TypeError:
            pass
    raise EvalError("no such overload")
