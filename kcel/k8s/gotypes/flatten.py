"""Schemas flattened as controller-gen flattens them (pkg/crd/flatten.go): each `$ref` replaced by its type's
flattened schema, wrapped with the referring field's own constraints in an `allOf`, and every `allOf` then
merged into its schema, field by field in JSONSchemaProps' order: properties and additionalProperties merged,
required lists joined, rules of the field before the type's, and two different values of one constraint kept
apart in an `allOf` of what remains (controller-gen's "hoisting").

Ported from kubernetes-sigs/controller-tools (Apache License 2.0, Copyright 2019 The Kubernetes Authors).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from kcel.k8s.gotypes.schemas import TypeRef

# JSONSchemaProps' fields in their Go order, with whether Go compares their values (strings and bools) or not
# (pointers, slices and maps: two set values always go through the conflict rules).
FIELDS: tuple[tuple[str, bool], ...] = (
    ("id", True), ("$schema", True), ("$ref", False), ("description", True), ("type", True), ("format", True),
    ("title", True), ("default", False), ("maximum", False), ("exclusiveMaximum", True), ("minimum", False),
    ("exclusiveMinimum", True), ("maxLength", False), ("minLength", False), ("pattern", True), ("maxItems", False),
    ("minItems", False), ("uniqueItems", True), ("multipleOf", False), ("enum", False), ("maxProperties", False),
    ("minProperties", False), ("required", False), ("items", False), ("allOf", False), ("oneOf", False),
    ("anyOf", False), ("not", False), ("properties", False), ("additionalProperties", False),
    ("patternProperties", False), ("dependencies", False), ("additionalItems", False), ("definitions", False),
    ("externalDocs", False), ("example", False), ("nullable", True), ("x-kubernetes-preserve-unknown-fields", False),
    ("x-kubernetes-embedded-resource", True), ("x-kubernetes-int-or-string", True),
    ("x-kubernetes-list-map-keys", False), ("x-kubernetes-list-type", False), ("x-kubernetes-map-type", False),
    ("x-kubernetes-validations", False),
)  # fmt: skip
_DOCS = ("description", "title", "externalDocs", "example")
Lookup = Callable[[str, str], tuple[TypeRef, dict[str, Any] | None]]  # ($ref, package) -> type and its schema


_POINTERS = frozenset(("$ref", "default", "maximum", "minimum", "maxLength", "minLength", "maxItems", "minItems",
                       "multipleOf", "maxProperties", "minProperties", "items", "not", "additionalProperties",
                       "additionalItems", "externalDocs", "example", "x-kubernetes-preserve-unknown-fields",
                       "x-kubernetes-list-type", "x-kubernetes-map-type"))  # fmt: skip


def _empty(value: Any) -> bool:
    return value is None or value is False or value == "" or value == [] or value == {}


def _unset(schema: dict[str, Any], key: str) -> bool:
    """Whether a field is Go's zero value: a pointer when absent (a set 0 or false is set), else when empty."""
    return key not in schema if key in _POINTERS else _empty(schema.get(key))


class Flattener:
    """Refs replaced by their types' flattened schemas, each type flattened once (Flattener.FlattenType)."""

    def __init__(self, lookup: Lookup) -> None:
        self.lookup = lookup
        self.flattened: dict[TypeRef, dict[str, Any]] = {}

    def flatten(self, schema: dict[str, Any], package: str) -> dict[str, Any]:
        """A schema with every `$ref` inlined (not yet merged: see `merge_all_of`)."""
        ref = schema.get("$ref")
        if ref:
            typ, base = self.lookup(ref, package)
            if typ in self.flattened:
                return _preserve(copy.deepcopy(self.flattened[typ]), schema)
            self.flattened[typ] = {}  # a type that refers to itself ends here
            result = self.flatten(copy.deepcopy(base) if base is not None else {}, typ.package)
            self.flattened[typ] = result
            return _preserve(copy.deepcopy(result), schema)
        return _children(schema, lambda child: self.flatten(child, package))


def _children(schema: dict[str, Any], visit: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
    """The schema with each sub-schema replaced by `visit` of it, in the schema walker's order."""
    out = dict(schema)
    items = out.get("items")
    if isinstance(items, dict):
        out["items"] = visit(items)
    elif isinstance(items, list):
        out["items"] = [visit(i) for i in items]
    for key in ("allOf", "oneOf", "anyOf"):
        if key in out:
            out[key] = [visit(s) for s in out[key]]
    if isinstance(out.get("not"), dict):
        out["not"] = visit(out["not"])
    for key in ("properties", "patternProperties", "definitions"):
        if key in out:
            out[key] = {name: visit(s) for name, s in out[key].items()}
    for key in ("additionalProperties", "additionalItems"):
        if isinstance(out.get(key), dict):
            out[key] = visit(out[key])
    return out


def _preserve(type_schema: dict[str, Any], field: dict[str, Any]) -> dict[str, Any]:
    """preserveFields: the type's schema and the field's own constraints side by side in an allOf, with the
    field's description (title, example, external docs) when it has one, else the type's."""
    rest = {k: v for k, v in field.items() if k not in (*_DOCS, "$ref")}
    out: dict[str, Any] = {"allOf": [type_schema, rest]}
    for key in _DOCS:
        source = field if not _unset(field, key) else type_schema
        if not _unset(source, key):
            out[key] = source[key]
    return out


def merge_all_of(schema: dict[str, Any], problems: list[str]) -> dict[str, Any]:
    """FlattenEmbedded: every allOf merged into its schema, top down."""
    out = dict(schema)
    branches = out.pop("allOf", [])
    for branch in branches:
        _merge_into(out, branch, problems)
    return _children(out, lambda child: merge_all_of(child, problems))


def _merge_into(dst: dict[str, Any], src: dict[str, Any], problems: list[str]) -> None:  # noqa: C901
    """flattenAllOfInto: one allOf branch merged into its schema."""
    for embedded in src.get("allOf", []):
        _merge_into(dst, embedded, problems)
    dst_rest: dict[str, Any] = {}
    src_rest: dict[str, Any] = {}
    hoisted = False
    for key, comparable in FIELDS:
        if key == "allOf" or key in _DOCS:
            continue
        if key == "enum":
            if src.get("enum") and not dst.get("enum"):
                dst["enum"] = list(src["enum"])
            continue
        if _unset(src, key):
            continue
        value = src[key]
        if _unset(dst, key):
            dst[key] = copy.deepcopy(value)
            continue
        if comparable and dst[key] == value:
            continue
        if key == "properties":
            for name, prop in value.items():
                if name not in dst[key]:
                    dst[key][name] = copy.deepcopy(prop)
                else:
                    merged = dict(dst[key][name])
                    _merge_into(merged, prop, problems)
                    dst[key][name] = merged
        elif key == "required":
            dst[key] = dst[key] + list(value)
        elif key == "type":
            problems.append(f"conflicting types in allOf branches in schema: {dst[key]} vs {value}")
        elif key == "additionalProperties":
            if not isinstance(value, dict):
                continue
            target = dst[key] if isinstance(dst[key], dict) else {}
            _merge_into(target, value, problems)
            dst[key] = target
        elif key in ("x-kubernetes-preserve-unknown-fields", "x-kubernetes-map-type"):
            dst[key] = value
        elif key == "x-kubernetes-validations":
            dst[key] = list(value) + dst[key]
        else:
            src_rest[key], dst_rest[key] = value, dst.pop(key)
            hoisted = True
    if hoisted:
        dst["allOf"] = [*dst.get("allOf", []), dst_rest, src_rest]
    if dst.get("required"):
        dst["required"] = sorted(set(dst["required"]))
