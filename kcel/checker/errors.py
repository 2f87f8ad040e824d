"""The checker's message catalogue: every text is cel-go's (checker/errors.go), in one place."""

from __future__ import annotations

from collections.abc import Sequence

from kcel.checker.types import DURATION, TIMESTAMP, CelType


def format_type(t: CelType) -> str:
    """A type as cel-go's messages print it (FormatCELType): `null`, `timestamp`, `list(duration)`."""
    if t.kind == "null":
        return "null"
    if t.kind == "error":
        return "!error!"
    if t == TIMESTAMP:
        return "timestamp"
    if t == DURATION:
        return "duration"
    if not t.params:
        return t.name
    return f"{t.name}({', '.join(map(format_type, t.params))})"


def undeclared_reference(name: str, container: str) -> str:
    return f"undeclared reference to '{name}' (in container '{container}')"


def no_matching_overload(function: str, args: Sequence[CelType], receiver: CelType | None = None) -> str:
    applied = ", ".join(map(format_type, args))
    target = f"{format_type(receiver)}." if receiver is not None else ""
    return f"found no matching overload for '{function}' applied to '{target}({applied})'"


def type_mismatch(expected: CelType, actual: CelType) -> str:
    return f"expected type '{format_type(expected)}' but found '{format_type(actual)}'"


def not_a_range(actual: CelType) -> str:
    shown = format_type(actual)
    return f"expression of type '{shown}' cannot be range of a comprehension (must be list, map, or dynamic)"


def no_field_selection(actual: CelType) -> str:
    return f"type '{format_type(actual)}' does not support field selection"


def field_type_mismatch(field: str, expected: CelType, actual: CelType) -> str:
    return f"expected type of field '{field}' is '{format_type(expected)}' but provided type is '{format_type(actual)}'"


def undefined_field(field: str) -> str:
    return f"undefined field '{field}'"
