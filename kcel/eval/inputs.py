"""A program's inputs: the variables' values as the activation gives them. Python's times and (registered by
kcel.proto) protobuf's well-known messages become CEL values on the way in; a missing variable is an `Unbound`."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from kcel.checker.types import BOOL, BYTES, DOUBLE, DURATION, INT, STRING, TIMESTAMP, UINT, CelType
from kcel.errors import EvalError
from kcel.temporal import Duration, Timestamp
from kcel.values import UINT64_MAX, Uint


def _python_time(value: datetime | timedelta) -> Any:
    """A `datetime`/`timedelta` variable as a CEL timestamp/duration; outside CEL's range, an evaluation error."""
    try:
        return Timestamp.from_python(value) if isinstance(value, datetime) else Duration.from_python(value)
    except ValueError as err:
        raise EvalError(str(err)) from None


INPUT_CONVERSIONS: dict[type, Callable[[Any], Any]] = {datetime: _python_time, timedelta: _python_time}
"""Classes of variable values that become other CEL values on the way in: Python's times, and (registered by
kcel.proto) protobuf's well-known types, a `Timestamp` message as a CEL timestamp, an `Int64Value` as an int."""


def convert_input(value: Any) -> Any:
    return INPUT_CONVERSIONS[value.__class__](value)


def register_input(cls: type, convert: Callable[[Any], Any]) -> None:
    INPUT_CONVERSIONS[cls] = convert
    SPECIAL_INPUT.add(cls)


class Unbound:
    """What a variable missing from the activation holds; using it is an error (cel-go's missing attribute). A
    value that does not fit its declared type is held as one too, with its own error."""

    __slots__ = ("name", "message")

    def __init__(self, name: str = "", message: str = "") -> None:
        self.name = name
        self.message = message or f"no such attribute(s): {name}"

    def error(self) -> EvalError:
        return EvalError(self.message)

    def __getitem__(self, key: Any) -> Any:
        raise self.error()


class UnboundVariable(Exception):
    """A variable the program reads is missing from the activation: the fast variants, which do not test each use
    of a variable, stop, and the program runs its strict variant, which fails where the variable is used."""


SPECIAL_INPUT: set[type] = {datetime, timedelta, Unbound}


def special_input(value: Any) -> Any:
    """A variable's value of a class that needs care: one of INPUT_CONVERSIONS converted, a missing variable stops."""
    if value.__class__ is Unbound:
        raise UnboundVariable(value.name)
    return convert_input(value)


def bound(value: Any) -> Any:
    """A use of a variable in the strict variant: its value, or the error of a missing one."""
    if value.__class__ is Unbound:
        raise value.error()
    return value


UNBOUND = Unbound()


# The class a value of each primitive type has (bool is not int here: `True.__class__ is bool`).
DECLARED_CLASSES: dict[CelType, type] = {
    BOOL: bool, INT: int, UINT: Uint, DOUBLE: float, STRING: str, BYTES: bytes, TIMESTAMP: Timestamp,
    DURATION: Duration,
}  # fmt: skip
# What cel-go's overloads find for a value of another type than the declared one: an error where it is used.
MISTYPED = Unbound(message="no such overload")


def read_variable(py: str, read: str, declared: CelType | None, strict: bool, schema_object: bool) -> list[str]:
    """The lines of a program's header that bind the Python name `py` to a variable's value (`read` from the
    activation). A value of another class than its declared primitive type is an error where it is used (cel-go
    finds no overload for it: `x + 1` of a double declared `int`; `||` absorbs it); a class test or two each."""
    lines = [f"    {py} = {read}"]
    cls = DECLARED_CLASSES.get(declared) if declared is not None else None
    if cls is not None:
        check = "_declared_input_strict" if strict else "_declared_input"
        name = cls.__name__ if cls.__module__ == "builtins" else f"_{cls.__name__}"  # runtime's names: `_Uint`
        lines.append(f"    if {py}.__class__ is not {name}: {py} = {check}({py}, {name})")
    elif strict:  # `datetime`/`timedelta` (and protobuf well-known) inputs become CEL values
        lines.append(f"    if {py}.__class__ in _INPUT_CONVERSIONS: {py} = _convert_input({py})")
    elif not schema_object:
        special = f"{py}.__class__ is not dict and {py}.__class__ in _SPECIAL_INPUT"
        lines.append(f"    if {special}: {py} = _special_input({py})")
    return lines


def declared_input(value: Any, cls: type) -> Any:
    """A variable of a primitive type whose value has another class, in the fast variants: a special input (a
    `datetime`) converted, a whole number as `_as_declared` has it; a missing or mistyped one stops the variant
    (`UnboundVariable`), and the strict one fails where it is used."""
    if value.__class__ in SPECIAL_INPUT:
        value = special_input(value)
    value = _as_declared(value, cls)
    if value is MISTYPED:
        raise UnboundVariable()
    return value


def declared_input_strict(value: Any, cls: type) -> Any:
    """As `declared_input` in the strict variant, where a missing variable fails where it is used."""
    if value.__class__ is Unbound:
        return value
    if value.__class__ in INPUT_CONVERSIONS:
        value = convert_input(value)
    return _as_declared(value, cls)


def _as_declared(value: Any, cls: type) -> Any:
    """A whole number is a `uint` or a `double` where one is declared (Python has one int; the API server decodes
    JSON's `2` as a double for a `number` field); any other value of another class is MISTYPED."""
    if value.__class__ is cls:
        return value
    if value.__class__ is int and cls is Uint and 0 <= value <= UINT64_MAX:
        return Uint(value)
    if value.__class__ is int and cls is float and -_FLOAT_INT_LIMIT <= value <= _FLOAT_INT_LIMIT:
        return float(value)
    return MISTYPED


_FLOAT_INT_LIMIT = 2**1023  # every int up to this has a double (rounded), as JSON decoding gives it
