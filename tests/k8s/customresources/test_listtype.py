"""x-kubernetes-list-type set and map uniqueness: (schema, object) -> Duplicate/Invalid errors."""

# ruff: noqa: E501  (golden rows: one case per line, expected texts verbatim)

from __future__ import annotations

from typing import Any

import pytest

from kcel.k8s import field as fe
from kcel.k8s.customresources.listtype import validate_list_sets_and_maps
from kcel.k8s.schemas.schema import Schema

SCHEMA = {"type": "object", "properties": {
    "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {}},
    "map": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object"}},
    "map2": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["a", "b"],
             "items": {"type": "object"}},
    "nested": {"type": "object", "additionalProperties": {"type": "array", "x-kubernetes-list-type": "set",
               "items": {"type": "string"}}},
}}  # fmt: skip

ROWS = [
    ({"set": ["a", "b", "a", "a"]}, ['set[2]: Duplicate value: "a"']),
    ({"set": [1, 1.0, True, "1"]}, []),  # Go compares interface{} keys with their types
    ({"set": [{"a": 1}, {"a": 1.0}]}, ['set[1]: Duplicate value: {"a":1}']),  # compound values compare as JSON
    ({"map": [{"name": "x"}, {"name": "x", "v": 1}, {}, None]}, ['map[1]: Duplicate value: {"name":"x"}', "map[3]: Duplicate value: {}"]),
    ({"map": [{"name": "x"}, "y"]}, ['map[1]: Invalid value: "y": must be an object for an array of list-type map']),
    ({"map2": [{"a": 1, "b": 2}, {"b": 2, "a": 1}, {"a": 1}]}, ['map2[1]: Duplicate value: {"a":1,"b":2}']),
    ({"nested": {"k": ["x", "x"]}}, ['nested[k][1]: Duplicate value: "x"']),
]  # fmt: skip


@pytest.mark.parametrize(("obj", "expected"), ROWS)
def test_list_types(obj: dict[str, Any], expected: list[str]) -> None:
    found = validate_list_sets_and_maps(fe.Path(), Schema.from_json(SCHEMA), obj)
    assert [str(e) for e in found] == expected
