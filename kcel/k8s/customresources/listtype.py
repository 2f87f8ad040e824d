"""Uniqueness of `x-kubernetes-list-type: set` items and `map` keys, checked as the API server checks them.

k8s.io/apiextensions-apiserver pkg/apiserver/schema/listtype/validation.go: each repeated item (set) or key
tuple (map) is a `Duplicate value` error at its second appearance; a map list whose items are not objects gets
one `Invalid value` error. Values compare as Go compares `interface{}` map keys: `1`, `1.0` and `true` differ.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from kcel.k8s import field as fe
from kcel.k8s.schemas.maplist import tag
from kcel.k8s.schemas.schema import Schema, found_below


def validate_list_sets_and_maps(path: fe.Path, schema: Schema | None, obj: Any) -> list[fe.FieldError]:
    """Every set and map list at or below `obj` (an object; anything else has nothing to check).

    >>> schema = Schema(properties={"tags": Schema(type="array", list_type="set", items=Schema(type="string"))})
    >>> [str(e) for e in validate_list_sets_and_maps(fe.Path(), schema, {"tags": ["a", "b", "a"]})]
    ['tags[2]: Duplicate value: "a"']
    """
    if schema is None or not isinstance(obj, dict) or not _has_list_types(schema):
        return []
    errors: list[fe.FieldError] = []
    extra = schema.additional_properties
    if isinstance(extra, Schema):
        for key, value in obj.items():
            errors += _value(path.key(key), extra, value)
    if schema.properties is not None:
        for key, value in obj.items():
            if key in schema.properties:
                errors += _value(path.child(key), schema.properties[key], value)
    return errors


def _has_list_types(schema: Schema) -> bool:
    return found_below(schema, "list types", lambda s: s.list_type in ("set", "map"))


def _value(path: fe.Path, schema: Schema, value: Any) -> list[fe.FieldError]:
    if not _has_list_types(schema):
        return []
    if isinstance(value, list):
        return _array(path, schema, value)
    if isinstance(value, dict):
        return validate_list_sets_and_maps(path, schema, value)
    return []


def _array(path: fe.Path, schema: Schema, items: list[Any]) -> list[fe.FieldError]:
    errors: list[fe.FieldError] = []
    if schema.list_type == "set":
        errors += [fe.duplicate(path.index(i), items[i]) for i in _repeats(items)]
    elif schema.list_type == "map":
        errors += _map_list(path, schema, items)
    if schema.items is not None:
        for i, item in enumerate(items):
            errors += _value(path.index(i), schema.items, item)
    return errors


def _repeats(values: list[Any]) -> list[int]:
    """Indices of the second appearance of each repeated value (validateListSet)."""
    seen: dict[Hashable, int] = {}
    repeats = []
    for i, value in enumerate(values):
        key = _set_key(value)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] == 2:
            repeats.append(i)
    return repeats


_MISSING: Any = object()  # an item without the key field, or a null item: Go's unspecifiedKeyValue{}


def _set_key(value: Any) -> Hashable:
    if value is _MISSING:
        return ("missing",)
    if isinstance(value, (dict, list)):
        return ("json", fe.render_value(value))  # json.Marshal: sorted keys, 1.0 written as 1
    return tag(value)


def _map_list(path: fe.Path, schema: Schema, items: list[Any]) -> list[fe.FieldError]:
    for i, item in enumerate(items):
        if item is not None and not isinstance(item, dict):
            return [fe.invalid(path.index(i), item, "must be an object for an array of list-type map")]
    if len(items) <= 1:
        return []
    if len(schema.list_map_keys) == 1:
        (name,) = schema.list_map_keys
        keys = [item.get(name, _MISSING) if isinstance(item, dict) else _MISSING for item in items]
        return [fe.duplicate(path.index(i), {} if keys[i] is _MISSING else {name: keys[i]}) for i in _repeats(keys)]
    tuples = [
        {k: item[k] for k in schema.list_map_keys if k in item} if isinstance(item, dict) else {} for item in items
    ]
    return [fe.duplicate(path.index(i), tuples[i]) for i in _repeats(tuples)]
