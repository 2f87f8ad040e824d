"""A program's inputs: the variables' values as the activation gives them. Python's times and (registered by
kcel.proto) protobuf's well-known messages become CEL values on the way in; a missing variable is an `Unbound`."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from kcel.errors import EvalError


def _python_time(value: datetime | timedelta) -> Any:
    """A `datetime`/`timedelta` variable as a CEL timestamp/duration; outside CEL's range, an evaluation error."""
    from kcel.temporal import Duration, Timestamp

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
    """What a variable missing from the activation holds; using it is an error (cel-go's missing attribute)."""

    __slots__ = ("name",)

    def __init__(self, name: str = "") -> None:
        self.name = name

    def error(self) -> EvalError:
        return EvalError(f"no such attribute(s): {self.name}")

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
