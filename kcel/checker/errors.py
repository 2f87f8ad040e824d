"""The checker's message catalogue: every text is cel-go's (checker/errors.go), in one place."""

from __future__ import annotations

from collections.abc import Sequence

from kcel.checker.types import CelType


def undeclared_reference(name: str, container: str) -> str:
    return f"undeclared reference to '{name}' (in container '{container}')"


def no_matching_overload(function: str, args: Sequence[CelType], receiver: CelType | None = None) -> str:
    applied = ", ".join(map(str, args))
    target = f"{receiver}." if receiver is not None else ""
    return f"found no matching overload for '{function}' applied to '{target}({applied})'"


def type_mismatch(expected: CelType, actual: CelType) -> str:
    return f"expected type '{expected}' but found '{actual}'"


def not_a_range(actual: CelType) -> str:
    return f"expression of type '{actual}' cannot be range of a comprehension (must be list, map, or dynamic)"


def no_field_selection(actual: CelType) -> str:
    return f"type '{actual}' does not support field selection"


def undefined_field(field: str) -> str:
    return f"undefined field '{field}'"


def not_optional(actual: CelType) -> str:
    return f"expected optional type, found '{actual}'"
