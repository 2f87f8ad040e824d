"""Go's `%v` of CEL values: how cel-go's runtime errors print the key or value they are about.

`no such key: 1` for the key `1u` or `1.0`, `unsupported index value 1.5 in list`, `cannot initialize optional
entry 'a' from non-optional value [1 2]`... cel-go formats these with `fmt` and its value types have no
`String()` method, so a uint prints bare, a double as Go's shortest `%g`, null as 0 and bytes as numbers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kcel.gofloat import format_double
from kcel.values import Optional, TypedList, TypeValue


def go_text(value: Any) -> str:
    """Go's `%v` of a CEL value (lists and maps as their `String()` methods write them)."""
    if value is True or value is False:
        return "true" if value else "false"
    if value is None:
        return "0"  # types.Null is a bare int32 type
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return format_double(value)
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return "[" + " ".join(map(str, value)) + "]"
    if isinstance(value, (list, tuple, TypedList)):
        return "[" + ", ".join(map(go_text, value)) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{go_text(k)}: {go_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, Optional):
        return f"optional({go_text(value.value)})" if value.has_value() else "optional.none()"
    if isinstance(value, TypeValue):
        return value.name
    return str(value)
