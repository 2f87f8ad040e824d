"""Optional values (cel-go `OptionalTypes`): optional.of/none/ofNonZeroValue and their methods.

`or` and `orValue` short-circuit, so the planner emits them as control flow; their table
entries give the checker their signatures and the dynamic path an implementation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from kcel.checker.types import BOOL, V, list_of, optional_of
from kcel.errors import EvalError
from kcel.libs import Library, Overload
from kcel.parser.macros import OPTIONALS
from kcel.values import NONE, OBJECTS, Optional


def optional_of_value(value: Any) -> Optional:
    return Optional(value)


def optional_none() -> Optional:
    return NONE


def _is_zero(value: Any) -> bool:
    if value is None or value is False:
        return True
    if isinstance(value, (bool, int, float)):
        return value == 0 and not isinstance(value, bool)
    if isinstance(value, (str, bytes, Sequence, Mapping)):
        return len(value) == 0
    if isinstance(value, OBJECTS.classes):
        return OBJECTS.is_zero(value)
    is_zero = getattr(value, "cel_is_zero", None)
    return bool(is_zero()) if is_zero is not None else False


def optional_of_non_zero_value(value: Any) -> Optional:
    return NONE if _is_zero(value) else Optional(value)


def _require(value: Any) -> Optional:
    if type(value) is not Optional:
        raise EvalError("no such overload")
    return value


def optional_value(opt: Any) -> Any:
    opt = _require(opt)
    if not opt.has_value():
        raise EvalError("optional.none() dereference")
    return opt.value


def optional_has_value(opt: Any) -> bool:
    return _require(opt).has_value()


def optional_or(opt: Any, other: Any) -> Any:
    return opt if _require(opt).has_value() else _require(other)


def optional_or_value(opt: Any, other: Any) -> Any:
    return opt.value if _require(opt).has_value() else other


def optional_unwrap(items: Sequence[Any]) -> list[Any]:
    out = []
    for item in items:
        if type(item) is not Optional:
            raise EvalError(f"value {item} is not optional")
        if item.has_value():
            out.append(item.value)
    return out


def list_first(items: Sequence[Any]) -> Optional:
    return Optional(items[0]) if items else NONE


def list_last(items: Sequence[Any]) -> Optional:
    return Optional(items[-1]) if items else NONE


OPT_V = optional_of(V)

LIBRARY = Library(
    "optional",
    overloads=(
        Overload("optional_of", "optional.of", (V,), OPT_V, optional_of_value),
        Overload("optional_ofNonZeroValue", "optional.ofNonZeroValue", (V,), OPT_V, optional_of_non_zero_value),
        Overload("optional_none", "optional.none", (), OPT_V, optional_none),
        Overload("optional_value", "value", (OPT_V,), V, optional_value, member=True),
        Overload("optional_hasValue", "hasValue", (OPT_V,), BOOL, optional_has_value, member=True),
        Overload("optional_or_optional", "or", (OPT_V, OPT_V), OPT_V, optional_or, member=True),
        Overload("optional_orValue_value", "orValue", (OPT_V, V), V, optional_or_value, member=True),
        Overload("optional_unwrap", "optional.unwrap", (list_of(OPT_V),), list_of(V), optional_unwrap),
        Overload("optional_unwrapOpt", "unwrapOpt", (list_of(OPT_V),), list_of(V), optional_unwrap, member=True),
        Overload("list_first", "first", (list_of(V),), OPT_V, list_first, member=True),
        Overload("list_last", "last", (list_of(V),), OPT_V, list_last, member=True),
    ),
    macros=OPTIONALS,
)


# cel-go v0.23 (Kubernetes 1.33) added optional.unwrap, unwrapOpt, first and last to the optional library.
_SINCE_V0_23 = frozenset({"optional_unwrap", "optional_unwrapOpt", "list_first", "list_last"})


def library(version: int) -> Library:
    """The optional library of a cel-go version: 0 before v0.23 (Kubernetes up to 1.32), 1 since."""
    if version >= 1:
        return LIBRARY
    return replace(LIBRARY, overloads=tuple(o for o in LIBRARY.overloads if o.id not in _SINCE_V0_23))
