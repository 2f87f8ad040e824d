"""Schema defaults applied to a custom resource, as the API server applies them after decoding.

k8s.io/apiextensions-apiserver pkg/apiserver/schema/defaulting/algorithm.go: a property with a `default` that is
absent (or null where the schema is not nullable) gets a copy of the default, in objects, list items and
additionalProperties maps alike, and defaulting continues inside what was set. Defaults are first pruned as
the API server prunes them when it loads the CRD (prune.go), so a default never brings unknown fields along.
"""

from __future__ import annotations

import copy
import weakref
from typing import Any

from kcel.k8s.customresources.pruning import prune
from kcel.k8s.schemas.schema import Schema

_PRUNED: weakref.WeakKeyDictionary[Schema, Any] = weakref.WeakKeyDictionary()


def default(obj: Any, schema: Schema | None) -> None:
    """Apply `schema`'s defaults to `obj` in place.

    >>> schema = Schema(properties={"spec": Schema(properties={"replicas": Schema(type="integer", default=1)})})
    >>> obj = {"spec": {}}
    >>> default(obj, schema)
    >>> obj
    {'spec': {'replicas': 1}}
    """
    if schema is None:
        return
    if isinstance(obj, dict):
        _default_object(obj, schema)
    elif isinstance(obj, list):
        items = schema.items
        for i, item in enumerate(obj):
            if _non_nullable_null(item, items):
                obj[i] = item = default_value(items)  # type: ignore[arg-type]
            default(item, items)


def _default_object(obj: dict[str, Any], schema: Schema) -> None:
    properties = schema.properties or {}
    for key, prop in properties.items():
        if _has_default(prop) and (key not in obj or _non_nullable_null(obj[key], prop)):
            obj[key] = default_value(prop)
    extra = schema.additional_properties
    for key, value in obj.items():
        if key in properties:
            default(value, properties[key])
        elif isinstance(extra, Schema):
            if _non_nullable_null(value, extra):
                obj[key] = value = default_value(extra)
            default(value, extra)


def default_value(schema: Schema) -> Any:
    """A fresh copy of the node's default, pruned by its own schema (None when it has none)."""
    if not _has_default(schema):
        return None
    if schema not in _PRUNED:
        value = copy.deepcopy(schema.default)
        prune(value, schema, is_resource_root=False)
        _PRUNED[schema] = value
    return copy.deepcopy(_PRUNED[schema])


def _has_default(schema: Schema) -> bool:
    return schema.has_default and schema.default is not None  # Go keeps `default: null` as no default


def _non_nullable_null(value: Any, schema: Schema | None) -> bool:
    return value is None and schema is not None and not schema.nullable
