"""Comparing an answer with an expectation: texts that must be contained, warnings, and objects as a diff.

Texts are matched by containment, so a case can name the part of a message it cares about; an empty
list or mapping means "none at all". Objects are compared as JSON values and shown as a unified diff of
their YAML, keys sorted, so the diff points at the field that differs.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from kcel.suites.model import Mismatch


def quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def check_texts(field: str, expected: Sequence[str] | None, actual: Sequence[str], noun: str) -> list[Mismatch]:
    """Every expected text is part of one of the actual ones; `[]` expects none (`noun`: "a warning")."""
    if expected is None:
        return []
    got = "\n".join(actual) if actual else f"no {field}"
    if not expected:
        return [Mismatch(field, f"no {field}", got)] if actual else []
    return [
        Mismatch(field, f"{noun} containing {quote(text)}", got)
        for text in expected
        if not any(text in item for item in actual)
    ]


def check_map(field: str, expected: Mapping[str, str] | None, actual: Mapping[str, str]) -> list[Mismatch]:
    """Each expected key has exactly that value (other keys may be there too); `{}` expects none."""
    if expected is None:
        return []
    got = "\n".join(f"{k}: {v}" for k, v in actual.items()) if actual else f"no {field}"
    if not expected:
        return [Mismatch(field, f"no {field}", got)] if actual else []
    return [
        Mismatch(field, f"{key}: {value}", got)
        for key, value in expected.items()
        if actual.get(key) != value
    ]  # fmt: skip


def check_object(field: str, expected: Any, actual: Any) -> list[Mismatch]:
    if expected is None or expected == actual:
        return []
    return [Mismatch(field, "the object below (-)", "the object below (+)", object_diff(expected, actual))]


def object_diff(expected: Any, actual: Any) -> tuple[str, ...]:
    """A unified diff of two objects' YAML (`-` expected, `+` actual)."""
    before, after = (_yaml(value).splitlines() for value in (expected, actual))
    return tuple(difflib.unified_diff(before, after, "expected", "actual", lineterm="", n=3))


def _yaml(value: Any) -> str:
    if value is None:
        return "null (no object: the request was rejected while decoding)\n"
    text: str = yaml.safe_dump(value, sort_keys=True, default_flow_style=False, allow_unicode=True, width=1_000_000)
    return text
