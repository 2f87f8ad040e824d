"""CEL equality and ordering on runtime values (cel-spec "Equality" and cross-type numerics).

Python's `==` is close but wrong in three ways CEL cares about: `True == 1`, `[1] == (1,)`
vs. CEL's typed lists, and NaN. These functions are what generated code calls whenever the
operand types are not known statically.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kcel.values import INT64_MAX, OBJECTS, CelMap, Optional, TypedList, Uint

_NUMERIC = (int, float)


def cel_equals(a: Any, b: Any) -> bool:
    """`a == b` under CEL's heterogeneous equality: numbers compare by value, nothing errors.

    Two values of one plain JSON class (what decoded manifests are made of) take the fast paths first: Python's
    `==` is CEL's for two strs, ints or floats (NaN included), and dicts with string keys and lists compare
    element by element without the general path's type tests."""
    cls = a.__class__
    if cls is b.__class__:
        if cls is dict:
            return _dicts_equal(a, b)
        if cls is list:
            return _lists_equal(a, b)
        if cls is str or cls is int or cls is float:
            return bool(a == b)
        if cls is bool:
            return a is b
    return _general_equals(a, b)


def _dicts_equal(a: dict[Any, Any], b: dict[Any, Any]) -> bool:
    if len(a) != len(b):
        return False
    get = b.get
    for key, value in a.items():
        if key.__class__ is not str:  # a numeric key may find another type's: cel-go's map lookup decides
            return _maps_equal(a, b)
        other = get(key, _MISSING)
        cls = value.__class__
        if cls is not other.__class__:
            if other is _MISSING or not _general_equals(value, other):
                return False
        elif cls is str or cls is int:
            if value != other:
                return False
        elif not (_dicts_equal(value, other) if cls is dict else _lists_equal(value, other) if cls is list
                  else cel_equals(value, other)):  # fmt: skip
            return False
    return True


def _lists_equal(a: list[Any], b: list[Any]) -> bool:
    if len(a) != len(b):
        return False
    for value, other in zip(a, b, strict=True):
        cls = value.__class__
        if cls is not other.__class__:
            if not _general_equals(value, other):
                return False
        elif cls is str or cls is int:
            if value != other:
                return False
        elif not (_dicts_equal(value, other) if cls is dict else _lists_equal(value, other) if cls is list
                  else cel_equals(value, other)):  # fmt: skip
            return False
    return True


_MISSING: Any = object()


def _general_equals(a: Any, b: Any) -> bool:
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
    if isinstance(a, OBJECTS.classes):
        return isinstance(b, OBJECTS.classes) and OBJECTS.equals(a, b)
    if isinstance(a, Optional):  # cel-go's Optional.Equal: both empty, or CEL's equality of what they hold
        if not isinstance(b, Optional) or a.has_value() != b.has_value():
            return False
        return not a.has_value() or cel_equals(a.value, b.value)
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
    """Find a key the CEL way (cel-go's map Find): `true` never finds `1`, `1` finds `1u` and `1u` finds `1`,
    `1.0` finds `1` or `1u`, but `1` and `1u` never find `1.0`.

    kcel builds maps with bool or double keys as `CelMap`s, which keep every key's type, so a dict needs one
    lookup; only a lookup that a bool key stored in a dict from the caller could answer (0, 1, `true`,
    `false`) is checked with a probe that matches stored keys of the kinds CEL accepts."""
    try:
        value = m[key]
    except (KeyError, TypeError):  # a key that cannot be hashed (a list) is in no map
        return _find_converted(m, key) if m.__class__ is CelMap else (False, None)
    cls = key.__class__
    if cls is str or m.__class__ is CelMap:  # a CelMap answers for the key itself, of its own type
        return True, value
    if m.__class__ is not dict and getattr(m, "cel_typed_keys", False):  # so does a protobuf map field
        return True, value
    if cls is int or cls is Uint:
        if key > 1 or key < 0:
            return True, value
        kinds = _INTEGERS
    elif cls is float:
        if key <= _MIN_INT64_DOUBLE:  # -2**63 as a double converts to no int64
            kinds = _DOUBLES
        elif key != 0 and key != 1:
            return True, value
        else:
            kinds = _NUMBERS
    elif cls is bool:
        kinds = _BOOLS
    else:
        return True, value
    return (True, value) if _Probe(key, kinds) in m else (False, None)


def _find_converted(m: CelMap, key: Any) -> tuple[bool, Any]:
    """The numeric conversions cel-go's Find tries after the key itself: double to int then uint, int to
    uint, uint to int, each only when lossless."""
    entries, cls = m.entries, key.__class__
    found = None
    if cls is float and key.is_integer():
        if _MIN_INT64_DOUBLE < key < -_MIN_INT64_DOUBLE:
            found = entries.get((int, int(key)))
        if found is None and 0 <= key < _TWO_64:
            found = entries.get((Uint, Uint(int(key))))
    elif cls is int and key >= 0:
        found = entries.get((Uint, Uint(key)))
    elif cls is Uint and key <= INT64_MAX:
        found = entries.get((int, int(key)))
    return (False, None) if found is None else (True, found[1])


class _Probe:
    """Stands for a key in a dict lookup and matches only a stored key of one of the given classes."""

    __slots__ = ("key", "kinds")

    def __init__(self, key: Any, kinds: frozenset[type] | tuple[type, ...]) -> None:
        self.key = key
        self.kinds = kinds

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return other.__class__ in self.kinds and bool(other == self.key)


_INTEGERS: frozenset[type] = frozenset({int, Uint})
_NUMBERS: frozenset[type] = frozenset({int, Uint, float})
_DOUBLES: frozenset[type] = frozenset({float})
_BOOLS: frozenset[type] = frozenset({bool})
_MIN_INT64_DOUBLE = -(2.0**63)
_TWO_64 = 2.0**64


def has_exact_key(m: Mapping[Any, Any], key: Any) -> bool:
    """Whether `m` holds `key` itself, of the same type (cel-go's map literal and delete match keys exactly)."""
    if m.__class__ is CelMap or key.__class__ is str:
        return key in m
    return _Probe(key, (key.__class__,)) in m
