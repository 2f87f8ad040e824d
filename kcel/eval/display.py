"""Values as CEL writes them, for people: the CLI, the REPL and explanations print results this way.

`cel_text` writes every value kcel evaluates to as the CEL a user would write to get it: `{"a": [1, 2u]}`,
`quantity("1Gi")`, `JSONPatch{op: "add", path: "/a", value: 1}`, `Object{spec: Object.spec{replicas: 3}}`,
`format.dns1123Label()`, `authorizer.group("apps").resource("deployments")`. A value no expression can build (an
authorization decision) is written as a literal of its type, as protobuf messages are. `json_value` is the `-o json`
form. Neither ever shows a Python repr: both look values up in one table per form, by CEL type name (what `type()`
returns), so that the Kubernetes libraries' values are covered without this early stage importing kcel.libs.
"""

from __future__ import annotations

import base64
import math
import string
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kcel.errors import CelError
from kcel.eval.runtime import type_name
from kcel.parser.unparser import const_text
from kcel.values import OBJECTS

Render = Callable[[Any], Any]


def cel_text(value: Any, limit: int | None = None) -> str:
    """`value` as CEL (`{"a": [1, 2u]}`); with `limit`, cut to about that many characters."""
    try:
        text = _text(value)
    except RecursionError:  # nested deeper than Python recurses, or containing itself: explanations must not fail
        text = "…"
    if limit is not None and len(text) > limit:
        return text[: max(limit - 1, 1)] + "…"
    return text


def json_value(value: Any) -> Any:
    """`value` as JSON data (`kcel eval -o json`): what a Kubernetes object would hold, else the CEL text.

    null, bools, strings and lists are themselves; ints and uints are JSON numbers, exact at any size (cel-go turns
    those beyond ±2^53 into strings; Kubernetes writes int64 fields as numbers); doubles are numbers, except NaN and
    ±Infinity, which JSON lacks and protobuf's JSON writes as "NaN", "Infinity", "-Infinity"; bytes are base64;
    maps are objects, a key that is not a string keyed by its CEL text (`1`, `true`, `2u`); timestamps are RFC 3339
    and durations protobuf's `"5400s"`; quantities, IPs, CIDRs, URLs and semvers are their string form, as in a
    manifest (`"1Gi"`: the JSON result's `type` says it is a quantity); JSONPatch values are RFC 6902 operations,
    apply configurations their fields (as the mutating admission plugin sends both); protobuf messages are protobuf's
    JSON. Everything else (optionals, types, formats, authorizer values, errors) is its CEL text, as a string."""
    if isinstance(value, CelError):
        return cel_text(value)
    if OBJECTS.classes and isinstance(value, OBJECTS.classes):
        return _message_json(value)
    render = _JSON.get(_kind(value))
    return cel_text(value) if render is None else render(value)


def type_text(value: Any) -> str:
    """The CEL type name of a runtime value (`map`, `google.protobuf.Timestamp`, `net.IP`)."""
    return type_name(value)


def result_type(static: object, value: Any) -> str:
    """The checker's type for a result, or the value's own type when the checker could only say dyn."""
    return type_text(value) if str(static) == "dyn" else str(static)


def _kind(value: Any) -> str:
    """The tables' key: the CEL type name, with every apply-configuration type (`Object.spec`) under `Object`."""
    name = type_name(value)
    return "Object" if name.startswith("Object.") else name


def _text(value: Any) -> str:
    if isinstance(value, CelError):  # an explanation's failed subexpression
        return f"error: {value}"
    if OBJECTS.classes and isinstance(value, OBJECTS.classes):  # a protobuf message, as its literal
        return _literal(type_name(value), OBJECTS.fields(value))
    render = _TEXT.get(_kind(value))
    if render is not None:
        return str(render(value))
    return f"<{type_name(value)}>"  # a host object that is no CEL value: its type, still never a Python repr


# -- CEL text of each kind of value ------------------------------------------------------------------


def _double(value: float) -> str:
    """CEL has no literal for NaN and the infinities; `double("NaN")` makes them (Go's ParseFloat reads these)."""
    if math.isnan(value):
        return 'double("NaN")'
    if math.isinf(value):
        return 'double("Infinity")' if value > 0 else 'double("-Infinity")'
    return const_text(value)


def _list(value: Sequence[Any]) -> str:
    return "[" + ", ".join(_text(v) for v in value) + "]"


def _map(value: Mapping[Any, Any]) -> str:
    return "{" + ", ".join(f"{_text(k)}: {_text(v)}" for k, v in value.items()) + "}"


def _optional(value: Any) -> str:
    return f"optional.of({_text(value.value)})" if value.has_value() else "optional.none()"


def _call(function: str) -> Render:
    """A value written as the function call that parses its string form: `quantity("1Gi")`, `ip("10.0.0.1")`."""
    return lambda value: f"{function}({const_text(str(value))})"


def _temporal(function: str) -> Render:
    """`timestamp("2023-01-01T10:00:00+02:00")` keeps the offset it was written with (`string()` prints it too)."""
    return lambda value: f"{function}({const_text(value.format())})"


def _field_name(name: str) -> str:
    """A field name as a message literal takes it: backquoted unless it is a plain identifier."""
    plain = name.isidentifier() and name.isascii() and name not in ("true", "false", "null", "in")
    return name if plain else f"`{name}`"


def _literal(type_name: str, fields: Sequence[tuple[str, Any]]) -> str:
    """A message literal, `type{name: value, ...}`, as protobuf messages and the mutation types are written."""
    return type_name + "{" + ", ".join(f"{_field_name(name)}: {_text(v)}" for name, v in fields) + "}"


def _patch(patch: Any) -> str:
    """`JSONPatch{op: "add", path: "/a", value: 1}`: the fields the literal set (`from` only for move and copy)."""
    fields = [(name, text) for name, text in (("op", patch.op), ("path", patch.path), ("from", patch.from_)) if text]
    return _literal("JSONPatch", fields + ([("value", patch.value)] if patch.has_value() else []))


def _object(value: Any) -> str:
    """An apply configuration: `Object{spec: Object.spec{replicas: 3}}`."""
    return _literal(value.type_name, list(value.fields.items()))


def _format(value: Any) -> str:
    """The function that returns the format, its name with the leading capitals lowered: `format.dns1123Label()`
    for DNS1123Label, `format.qualifiedName()` for QualifiedName, `format.uri()` for URI."""
    name = value.name
    capitals = len(name) - len(name.lstrip(string.ascii_uppercase))
    if 1 < capitals < len(name) and name[capitals].islower():  # `IPAddress`: the last capital starts a word
        capitals -= 1
    return f"format.{name[:capitals].lower()}{name[capitals:]}()"


_SERVICE_ACCOUNT, _SERVICE_ACCOUNTS = "system:serviceaccount:", "system:serviceaccounts"
"""The user and groups a service account authenticates as (k8s_authz.service_account_user)."""


def _authorizer(value: Any) -> str:
    """`authorizer`, or `authorizer.serviceAccount("ns", "name")` when it asks as exactly that service account."""
    user = value.user
    namespace, _, name = user.name.removeprefix(_SERVICE_ACCOUNT).partition(":")
    groups = (_SERVICE_ACCOUNTS, f"{_SERVICE_ACCOUNTS}:{namespace}")
    if user.name.startswith(_SERVICE_ACCOUNT) and (user.uid, tuple(user.groups), user.extra) == ("", groups, {}):
        return f"authorizer.serviceAccount({const_text(namespace)}, {const_text(name)})"
    return "authorizer"


def _path_check(value: Any) -> str:
    return f"{_authorizer(value.authorizer)}.path({const_text(value.path)})"


def _group_check(value: Any) -> str:
    return f"{_authorizer(value.authorizer)}.group({const_text(value.group)})"


_RESOURCE_STEPS = (
    ("subresource", "subresource"), ("namespace", "namespace"), ("name", "name"),
    ("field_selector", "fieldSelector"), ("label_selector", "labelSelector"),
)  # fmt: skip
"""ResourceCheck attributes and the builder methods that set them, in the order a check is usually written."""


def _resource_check(value: Any) -> str:
    """`authorizer.group("").resource("pods").namespace("default")`: a step for each part that was set."""
    text = f"{_group_check(value.group_check)}.resource({const_text(value.resource)})"
    for attribute, method in _RESOURCE_STEPS:
        if getattr(value, attribute):
            text += f".{method}({const_text(getattr(value, attribute))})"
    return text


def _decision(value: Any) -> str:
    """No expression builds a decision without asking the authorizer: a literal of what allowed(), reason() and
    error() read, `kubernetes.authorization.Decision{allowed: false, reason: "…"}`."""
    decision = value.decision
    fields: list[tuple[str, Any]] = [("allowed", decision.verdict.name == "ALLOW")]
    fields += [("reason", decision.reason)] if decision.reason else []
    fields += [("error", decision.error)] if decision.error is not None else []
    return _literal(type_name(value), fields)


_TEXT: dict[str, Render] = {
    "null_type": const_text, "bool": const_text, "int": const_text, "uint": const_text, "string": const_text,
    "bytes": const_text, "double": _double, "list": _list, "map": _map, "optional_type": _optional,
    "type": lambda value: value.name,
    "google.protobuf.Timestamp": _temporal("timestamp"), "google.protobuf.Duration": _temporal("duration"),
    "kubernetes.Quantity": _call("quantity"), "net.IP": _call("ip"), "net.CIDR": _call("cidr"),
    "kubernetes.URL": _call("url"), "kubernetes.Semver": _call("semver"), "kubernetes.NamedFormat": _format,
    "JSONPatch": _patch, "Object": _object,
    "kubernetes.authorization.Authorizer": _authorizer, "kubernetes.authorization.PathCheck": _path_check,
    "kubernetes.authorization.GroupCheck": _group_check, "kubernetes.authorization.ResourceCheck": _resource_check,
    "kubernetes.authorization.Decision": _decision,
}  # fmt: skip
"""How CEL writes a value of each type: every type a kcel value has, by the name `type()` gives it."""


# -- JSON of each kind of value ----------------------------------------------------------------------


def _same(value: Any) -> Any:
    return value


def _double_json(value: float) -> float | str:
    if math.isfinite(value):
        return value
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")


def _list_json(value: Sequence[Any]) -> list[Any]:
    return [json_value(v) for v in value]


def _map_json(value: Mapping[Any, Any]) -> dict[str, Any]:
    """A dict or a kcel.values.CelMap (keys `true` and `1` kept apart by their CEL text)."""
    return {k if isinstance(k, str) else cel_text(k): json_value(v) for k, v in value.items()}


def _patch_json(patch: Any) -> dict[str, Any]:
    """The RFC 6902 operation: `from` when set, `value` when the literal gave one."""
    record: dict[str, Any] = {"op": patch.op, "path": patch.path}
    record |= {"from": patch.from_} if patch.from_ else {}
    return record | ({"value": json_value(patch.value)} if patch.has_value() else {})


def _message_json(value: Any) -> Any:
    """A protobuf message, in protobuf's JSON."""
    from google.protobuf import json_format

    return json_format.MessageToDict(value, preserving_proto_field_name=True)


_JSON: dict[str, Render] = {
    "null_type": _same, "bool": _same, "string": _same, "int": int, "uint": int, "double": _double_json,
    "bytes": lambda value: base64.b64encode(value).decode("ascii"), "list": _list_json, "map": _map_json,
    "google.protobuf.Timestamp": lambda value: value.format(), "google.protobuf.Duration": lambda value: value.format(),
    "kubernetes.Quantity": str, "net.IP": str, "net.CIDR": str, "kubernetes.URL": str, "kubernetes.Semver": str,
    "JSONPatch": _patch_json, "Object": lambda value: _map_json(value.fields),
}  # fmt: skip
"""The types whose values have a JSON form of their own, by CEL type name; any other value is its CEL text."""
