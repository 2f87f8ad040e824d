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


# Before 1.34 a compound bad value was Go's `%#v` of the decoded value (apimachinery c58e197e made it JSON).
GO_SYNTAX_ROWS = [
    ({"set": [{"a": 1}, {"a": 1.0}]}, ['set[1]: Duplicate value: map[string]interface {}{"a":1}']),
    ({"map": [{"name": "x"}, {"name": "x", "v": 1}, {}, None]}, ['map[1]: Duplicate value: map[string]interface {}{"name":"x"}', "map[3]: Duplicate value: map[string]interface {}{}"]),
    ({"map2": [{"a": 1, "b": [True]}, {"b": [True], "a": 1}]}, ['map2[1]: Duplicate value: map[string]interface {}{"a":1, "b":[]interface {}{true}}']),
    ({"set": ["a", "b", "a"]}, ['set[2]: Duplicate value: "a"']),  # strings were always quoted
]  # fmt: skip


@pytest.mark.parametrize(("obj", "expected"), GO_SYNTAX_ROWS)
@pytest.mark.parametrize("version", [(1, 30), (1, 33)])
def test_list_types_before_json_bad_values(obj: dict[str, Any], expected: list[str], version: fe.Version) -> None:
    with fe.answering_as(version):
        found = validate_list_sets_and_maps(fe.Path(), Schema.from_json(SCHEMA), obj)
    assert [str(e) for e in found] == expected
