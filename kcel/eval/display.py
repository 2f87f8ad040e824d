"""Values as CEL writes them, for people: the CLI, the REPL and explanations print results this way."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kcel.errors import CelError
from kcel.eval.runtime import type_name
from kcel.parser.unparser import const_text
from kcel.values import OBJECTS, ListView, Optional, TypeValue, Uint

# Kubernetes library values print as the call that makes them: `quantity("1Gi")`.
_CONSTRUCTORS = {
    "kubernetes.Quantity": "quantity", "net.IP": "ip", "net.CIDR": "cidr", "kubernetes.URL": "url",
    "kubernetes.Semver": "semver",
}  # fmt: skip


def cel_text(value: Any, limit: int | None = None) -> str:
    """`value` as a CEL literal (`{"a": [1, 2u]}`); with `limit`, cut to about that many characters."""
    try:
        text = _text(value)
    except RecursionError:  # nested deeper than Python recurses, or containing itself: explanations must not fail
        text = "…"
    if limit is not None and len(text) > limit:
        return text[: max(limit - 1, 1)] + "…"
    return text


def type_text(value: Any) -> str:
    """The CEL type name of a runtime value (`map`, `google.protobuf.Timestamp`, `net.IP`)."""
    return type_name(value)


def result_type(static: object, value: Any) -> str:
    """The checker's type for a result, or the value's own type when the checker could only say dyn."""
    return type_text(value) if str(static) == "dyn" else str(static)


def _text(value: Any) -> str:
    if isinstance(value, CelError):
        return f"error: {value}"
    if value is None or isinstance(value, (bool, int, float, str, bytes, Uint)):
        return const_text(value)
    if isinstance(value, (list, tuple, ListView)):
        return "[" + ", ".join(_text(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_text(k)}: {_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, Optional):
        return f"optional.of({_text(value.value)})" if value.has_value() else "optional.none()"
    if isinstance(value, TypeValue):
        return value.name
    if isinstance(value, OBJECTS.classes):  # a protobuf message, as its literal
        fields = ", ".join(f"{name}: {_text(v)}" for name, v in OBJECTS.fields(value))
        return f"{type_name(value)}{{{fields}}}"
    constructor = _CONSTRUCTORS.get(type_name(value))
    if constructor is not None:
        return f"{constructor}({const_text(str(value))})"
    return repr(value)  # timestamps and durations repr as `timestamp("…")` / `duration("…")`
