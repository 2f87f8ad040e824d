"""What each schema marker does to a schema (controller-tools pkg/crd/markers: validation.go, topology.go,
crd.go's externalDocs), applied in controller-gen's order: by priority (`Type`, `XIntOrString`, `listType` and
`+default` first, the one-of rules last), `items:` markers after the rest, on the array's items.

Ported from kubernetes-sigs/controller-tools (Apache License 2.0, Copyright 2019 The Kubernetes Authors).
Rules keep their marker's place under ORIGIN, a key no schema has, until the CRD's source map is made.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from kcel.k8s.gotypes.markers import Marker, Markers

ORIGIN = "\x00origin"  # a rule's marker, carried through copies and merges, removed from the final schema
VALIDATION = "kubebuilder:validation:"
ITEMS = VALIDATION + "items:"
DEFAULT_PRIORITY = 10
_PRIORITY = {"Type": 9, "XIntOrString": 9, "listType": 9, "k8s:listType": 9, "default": 9,
             "AtMostOneOf": 11, "ExactlyOneOf": 12, "AtLeastOneOf": 13}  # fmt: skip
REASONS = ("FieldValueRequired", "FieldValueInvalid", "FieldValueForbidden", "FieldValueDuplicate")


def _short(name: str) -> str:
    return name.removeprefix(ITEMS).removeprefix(VALIDATION)


EnumValues = Callable[[], list[str]] | None  # a type's string constants (`+k8s:enum`); None for a field's markers


def apply_markers(markers: Markers, schema: dict[str, Any], enum_values: EnumValues, file: str) -> list[str]:
    """Apply a node's schema markers to its schema (in the Go file `file`); the errors controller-gen reports."""
    plain = [m for name, found in markers.values.items() if not name.startswith(ITEMS) for m in found]
    items = [m for name, found in markers.values.items() if name.startswith(ITEMS) for m in found]
    errors = []
    for marker in sorted(plain, key=lambda m: _PRIORITY.get(_short(m.name), DEFAULT_PRIORITY)):
        error = _apply(marker, schema, enum_values, file)
        if error:
            errors.append(error)
    for marker in sorted(items, key=lambda m: _PRIORITY.get(_short(m.name), DEFAULT_PRIORITY)):
        target = schema.get("items")
        if schema.get("type") != "array" or not isinstance(target, dict):
            errors.append(f"must apply {marker.name} to an array value, found {schema.get('type', '')}")
            continue
        error = _apply(marker, target, enum_values, file)
        if error:
            errors.append(error)
    return errors


def _integral(value: float) -> bool:
    return not math.isnan(value) and not math.isinf(value) and value == math.trunc(value)


def _numeric(marker: str, schema: dict[str, Any], value: Any, key: str) -> str:
    kind = schema.get("type", "")
    if kind not in ("integer", "number"):
        return f"must apply {marker} to a numeric value, found {kind}"
    if key != "exclusive" and kind == "integer" and not _integral(float(value)):
        return f"cannot apply non-integral {marker} validation ({_go_number(value)}) to integer value"
    return ""


def _number(value: float) -> float | int:
    """A float64 as encoding/json writes it and YAML reads it back: 5, not 5.0."""
    return int(value) if _integral(value) and abs(value) < 1e21 else value


def _go_number(value: float) -> str:
    return repr(value).removesuffix(".0") if isinstance(value, float) else str(value)


def _apply(marker: Marker, schema: dict[str, Any], enum_values: EnumValues, file: str) -> str:  # noqa: C901
    """One marker's ApplyToSchema; its error, or ""."""
    name, value = _short(marker.name), marker.value
    kind = schema.get("type", "")
    textual = kind == "string" or schema.get("x-kubernetes-int-or-string")
    if name in ("Maximum", "Minimum", "MultipleOf"):
        problem = _numeric(name.lower(), schema, value, name)
        if not problem:
            schema[name[0].lower() + name[1:]] = _number(float(value))
        return problem
    if name in ("ExclusiveMaximum", "ExclusiveMinimum"):
        problem = _numeric(name.lower(), schema, 0, "exclusive")
        if not problem and value:
            schema[name[0].lower() + name[1:]] = True
        elif not problem:
            schema.pop(name[0].lower() + name[1:], None)
        return problem
    if name in ("MaxLength", "MinLength", "Pattern"):
        if not textual:
            return f'must apply {name.lower()} to a textual value, found type "{kind}"'
        schema[name[0].lower() + name[1:]] = value
        if name == "Pattern" and value == "":
            schema.pop("pattern")
        return ""
    if name in ("MaxItems", "MinItems", "UniqueItems"):
        if kind != "array":
            return f"must apply {'maxitem' if name == 'MaxItems' else name.lower()} to an array"
        if name == "UniqueItems":
            _set(schema, "uniqueItems", value)
        else:
            schema[name[0].lower() + name[1:]] = value
        return ""
    if name in ("MinProperties", "MaxProperties"):
        if kind != "object":
            return f"must apply {name.lower()} to an object"
        schema[name[0].lower() + name[1:]] = value
        return ""
    if name == "Enum":
        schema["enum"] = _json(value)
        return ""
    if name in ("Format", "Type"):
        _set(schema, name.lower(), value)
        return ""
    if name == "nullable":
        schema["nullable"] = True
    elif name in ("XPreserveUnknownFields", "kubebuilder:pruning:PreserveUnknownFields"):
        schema["x-kubernetes-preserve-unknown-fields"] = True
    elif name in ("XEmbeddedResource", "EmbeddedResource"):
        schema["x-kubernetes-embedded-resource"] = True
    elif name == "XIntOrString":
        schema["x-kubernetes-int-or-string"] = True
    elif name == "kubebuilder:default":
        default = _json(value)
        schema["default"] = [] if kind == "array" and default == {} else default
    elif name == "default":
        if value is not None:
            schema["default"] = value
    elif name == "kubebuilder:example":
        schema["example"] = _json(value)
    elif name == "kubebuilder:title":
        if value is not None:
            if not isinstance(value, str):
                return f"expected string, got {_go_type(value)}"
            _set(schema, "title", value)
    elif name == "XValidation":
        return _xvalidation(marker, schema, file)
    elif name in ("AtMostOneOf", "ExactlyOneOf", "AtLeastOneOf"):
        _one_of(name, list(value or []), schema)
    elif name == "k8s:immutable":
        schema.setdefault("x-kubernetes-validations", []).append(
            {"rule": "self == oldSelf", "message": "field is immutable"}
        )
    elif name == "k8s:enum":
        return _enum(schema, enum_values)
    elif name in ("listType", "k8s:listType"):
        if kind != "array":
            return f"must apply listType to an array, found {kind}"
        if value not in ("map", "atomic", "set"):
            return 'ListType must be either "map", "set" or "atomic"'
        schema["x-kubernetes-list-type"] = value
    elif name in ("listMapKey", "k8s:listMapKey"):
        if kind != "array":
            return f"must apply listMapKey to an array, found {kind}"
        if schema.get("x-kubernetes-list-type") != "map":
            return "must apply listMapKey to an associative-list"
        schema.setdefault("x-kubernetes-list-map-keys", []).append(value)
    elif name in ("mapType", "structType"):
        if name == "mapType" and kind != "object":
            return "must apply mapType to an object"
        if name == "structType" and kind not in ("object", ""):
            return ("must apply structType to an object; either explicitly set or defaulted through an empty "
                    "schema type")  # fmt: skip
        if value not in ("atomic", "granular"):
            return f'{"MapType" if name == "mapType" else "StructType"} must be either "granular" or "atomic"'
        schema["x-kubernetes-map-type"] = value
    elif name == "kubebuilder:externalDocs":
        url = value.get("url", "")
        if not _request_uri(url):
            return f'invalid url "{url}" in kubebuilder:externalDocs marker: parse "{url}": invalid URI for request'
        schema["externalDocs"] = {"url": url, **({"description": value["description"]}
                                                 if value.get("description") else {})}  # fmt: skip
    return ""


def _set(schema: dict[str, Any], key: str, value: Any) -> None:
    """A Go field set to a value: its zero value is no field at all in the JSON."""
    if value in ("", False, None):
        schema.pop(key, None)
    else:
        schema[key] = value


def _json(value: Any) -> Any:
    """A marker's untyped value as encoding/json writes it and the YAML reads it back."""
    return json.loads(json.dumps(value))


def _go_type(value: Any) -> str:
    return {bool: "bool", int: "int", float: "float64", list: "[]interface {}", dict: "map[string]interface {}"}.get(
        type(value), "string"
    )


def _request_uri(url: str) -> bool:
    if url.startswith("/"):
        return True
    parts = urlsplit(url)
    return bool(parts.scheme)


def _xvalidation(marker: Marker, schema: dict[str, Any], file: str) -> str:
    value = dict(marker.value)
    reason = value.get("reason", "")
    if reason and reason not in REASONS:
        return f"invalid reason {reason}, valid values are {', '.join(REASONS[:3])} and {REASONS[3]}"
    rule: dict[str, Any] = {"rule": value.get("rule", "")}
    for key in ("message", "messageExpression", "reason", "fieldPath"):
        if value.get(key):
            rule[key] = value[key]
    if "optionalOldSelf" in value:
        rule["optionalOldSelf"] = value["optionalOldSelf"]
    rule[ORIGIN] = (file, marker)
    schema.setdefault("x-kubernetes-validations", []).append(rule)
    return ""


def _one_of(name: str, fields: list[str], schema: dict[str, Any]) -> None:
    """The rule a one-of marker writes (v0.21.0: a list of has() filtered for true, its size compared)."""
    if not fields:
        return
    listed = "[" + ",".join(f"has(self.{f})" for f in fields) + "].filter(x,x==true).size()"
    bound, words = {"AtMostOneOf": ("<= 1", "at most one of the fields in {} may be set"),
                    "ExactlyOneOf": ("== 1", "exactly one of the fields in {} must be set"),
                    "AtLeastOneOf": (">= 1", "at least one of the fields in {} must be set")}[name]  # fmt: skip
    message = words.format("[" + " ".join(fields) + "]")
    schema.setdefault("x-kubernetes-validations", []).append({"rule": f"{listed} {bound}", "message": message})


def _enum(schema: dict[str, Any], enum_values: EnumValues) -> str:
    if enum_values is None:
        return "k8s:enum must be set on a type, not a field"
    values = sorted(json.dumps(v) for v in enum_values())
    if not values:
        return "no enum values found for type"
    schema["type"] = "string"
    schema["enum"] = [json.loads(v) for v in values]
    return ""
