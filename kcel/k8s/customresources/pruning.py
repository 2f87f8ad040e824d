"""Pruning of fields a structural schema does not declare, as the API server does when it decodes a custom resource.

k8s.io/apiextensions-apiserver pkg/apiserver/schema/pruning/algorithm.go: unknown object fields are dropped
unless `x-kubernetes-preserve-unknown-fields` is set; at the root and at `x-kubernetes-embedded-resource`
nodes `apiVersion`, `kind` and `metadata` are kept (metadata is pruned to ObjectMeta's fields separately).
Also the null-dropping that follows it (pkg/apiserver/schema/defaulting/prunenulls.go).
Everything works in place on plain JSON data; callers copy first.
"""

from __future__ import annotations

from typing import Any

from kcel.k8s.schemas.schema import Schema

META_FIELDS = frozenset(("apiVersion", "kind", "metadata"))


def prune(obj: Any, schema: Schema | None, is_resource_root: bool = True) -> list[str]:
    """Drop unknown fields from `obj` in place; returns their paths, sorted (`spec.foo`, `spec.items[0].bar`).

    >>> obj = {"apiVersion": "v1", "kind": "K", "spec": {"a": 1, "b": 2}, "extra": 3}
    >>> prune(obj, Schema(properties={"spec": Schema(properties={"a": Schema(type="integer")})}))
    ['extra', 'spec.b']
    >>> obj
    {'apiVersion': 'v1', 'kind': 'K', 'spec': {'a': 1}}
    """
    if is_resource_root:
        schema = schema or Schema()
        if not schema.embedded_resource:
            schema = schema.with_changes(embedded_resource=True)
    unknown: list[str] = []
    _prune(obj, schema, "", unknown)
    return sorted(unknown)


def _prune(value: Any, schema: Schema | None, path: str, unknown: list[str]) -> None:
    if schema is not None and schema.preserve_unknown_fields:
        _skip_prune(value, schema, path, unknown)
        return
    if isinstance(value, dict):
        _prune_object(value, schema, path, unknown)
    elif isinstance(value, list):
        items = schema.items if schema is not None else None
        for i, item in enumerate(value):
            _prune(item, items, f"{path}[{i}]", unknown)


def _prune_object(value: dict[str, Any], schema: Schema | None, path: str, unknown: list[str]) -> None:
    if schema is None:
        unknown.extend(_join(path, key) for key in value)
        value.clear()
        return
    for key in list(value):
        if schema.embedded_resource and key in META_FIELDS:
            continue
        child = _child_schema(schema, key)
        if child is not _UNKNOWN:
            _prune(value[key], child, _join(path, key), unknown)
            continue
        if key not in META_FIELDS or path:  # a stray apiVersion/kind/metadata at the root is not reported
            unknown.append(_join(path, key))
        del value[key]


def _skip_prune(value: Any, schema: Schema, path: str, unknown: list[str]) -> None:
    """Below `x-kubernetes-preserve-unknown-fields`: unknown fields stay, declared ones are still pruned."""
    if isinstance(value, dict):
        for key, item in value.items():
            if schema.embedded_resource and key in META_FIELDS:
                continue
            child = _child_schema(schema, key)
            if child is not _UNKNOWN:
                _prune(item, child, _join(path, key), unknown)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if schema.items is not None:
                _skip_prune(item, schema.items, f"{path}[{i}]", unknown)


_UNKNOWN: Any = object()


def _child_schema(schema: Schema, key: str) -> Schema | None:
    """The schema of field `key`: a property, else additionalProperties (None when it is a bare true/false, whose
    values Go prunes with a nil schema), else `_UNKNOWN`."""
    if schema.properties is not None and key in schema.properties:
        return schema.properties[key]
    extra = schema.additional_properties
    if extra is None:
        return _UNKNOWN  # type: ignore[no-any-return]
    return extra if isinstance(extra, Schema) else None


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def prune_non_nullable_nulls(obj: Any, schema: Schema | None) -> None:
    """Drop object fields that are null where the schema is neither nullable nor defaulted, in place
    (PruneNonNullableNullsWithoutDefaults); nulls in lists stay."""
    if isinstance(obj, dict):
        for key in list(obj):
            child = _field_schema(schema, key)
            value = obj[key]
            if value is None and child is not None and not child.nullable and not _defaulted(child):
                del obj[key]
            else:
                prune_non_nullable_nulls(value, child)
    elif isinstance(obj, list):
        items = schema.items if schema is not None else None
        for item in obj:
            prune_non_nullable_nulls(item, items)


def _defaulted(schema: Schema) -> bool:
    return schema.has_default and schema.default is not None  # `default: null` is no default in Go


def _field_schema(schema: Schema | None, key: str) -> Schema | None:
    if schema is None:
        return None
    if schema.properties is not None and key in schema.properties:
        return schema.properties[key]
    extra = schema.additional_properties
    return extra if isinstance(extra, Schema) else None
