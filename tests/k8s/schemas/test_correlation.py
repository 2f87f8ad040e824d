"""Ratcheting correlation: which new nodes have an old value, and when a node counts as unchanged."""

from __future__ import annotations

from typing import Any

import pytest

from kcel.k8s.schemas.correlation import CorrelatedObject, deep_equal
from kcel.k8s.schemas.schema import Schema

NAN = float("nan")
SHARED_NAN_LIST = [NAN]

DEEP_EQUAL = [
    pytest.param(1, 1, True, id="int"),
    pytest.param(1, 1.0, False, id="int_vs_float"),
    pytest.param(True, 1, False, id="bool_vs_int"),
    pytest.param(0, False, False, id="zero_vs_false"),
    pytest.param("1", 1, False, id="str_vs_int"),
    pytest.param(None, None, True, id="nil"),
    pytest.param(None, {}, False, id="nil_vs_empty_map"),
    pytest.param(None, [], False, id="nil_vs_empty_list"),
    pytest.param({}, [], False, id="map_vs_list"),
    pytest.param({"a": 1, "b": [1, 2]}, {"b": [1, 2], "a": 1}, True, id="map_order_free"),
    pytest.param({"a": None}, {"b": None}, False, id="different_keys"),
    pytest.param({"a": None}, {}, False, id="null_value_vs_absent"),
    pytest.param([1, 2], [2, 1], False, id="list_ordered"),
    pytest.param({"a": [{"b": 1}]}, {"a": [{"b": 1.0}]}, False, id="nested_int_vs_float"),
    pytest.param(NAN, NAN, False, id="nan"),
    pytest.param([NAN], [NAN], False, id="nan_in_different_lists"),
    pytest.param(SHARED_NAN_LIST, SHARED_NAN_LIST, True, id="same_list_object"),
]


@pytest.mark.parametrize(("a", "b", "expected"), DEEP_EQUAL)
def test_deep_equal(a: Any, b: Any, expected: bool) -> None:
    assert deep_equal(a, b) is expected
    assert deep_equal(b, a) is expected


def _map_list(keys: list[str], item_properties: dict[str, Any], list_type: str = "map") -> dict[str, Any]:
    return {
        "type": "array",
        "x-kubernetes-list-type": list_type,
        "x-kubernetes-list-map-keys": keys,
        "items": {"type": "object", "properties": item_properties},
    }


STRING = {"type": "string"}
ATOMIC_STRINGS = {"type": "array", "items": STRING}
PORTS = _map_list(["name", "protocol"], {"name": STRING, "protocol": STRING, "port": {"type": "integer"}})
SCHEMA = Schema.from_json(
    {
        "type": "object",
        "properties": {
            "name": STRING,
            "labels": {"type": "object", "additionalProperties": STRING},
            "ports": PORTS,
            "containers": _map_list(["name"], {"name": STRING, "ports": PORTS, "args": ATOMIC_STRINGS}),
            "tags": {"type": "array", "items": STRING, "x-kubernetes-list-type": "set"},
            "args": ATOMIC_STRINGS,
            "atomic": {"type": "array", "items": {"type": "object", "properties": {"name": STRING}}},
        },
    }
)

OLD: dict[str, Any] = {
    "name": "n",
    "labels": {"app": "web", "tier": "front"},
    "ports": [{"name": "http", "protocol": "TCP", "port": 80}, {"name": "http", "protocol": "UDP", "port": 81}],
    "containers": [
        {"name": "sidecar", "args": ["-v"]},
        {"name": "main", "ports": [{"name": "http", "protocol": "TCP", "port": 8080}], "args": ["a", "b"]},
    ],
    "tags": ["x", "y"],
    "args": ["a"],
    "atomic": [{"name": "a"}],
    "extra": 1,
}
NEW: dict[str, Any] = {
    "name": "n2",
    "labels": {"app": "web", "env": "prod"},
    "ports": [{"name": "http", "protocol": "UDP", "port": 81}, {"name": "https", "protocol": "TCP", "port": 443}],
    "containers": [
        {"name": "main", "ports": [{"name": "http", "protocol": "TCP", "port": 8081}], "args": ["a", "b"]},
        {"name": "new"},
    ],
    "tags": ["x", "y"],
    "args": ["a"],
    "atomic": [{"name": "a"}],
    "extra": 1,
}

# (path of Key/Index steps, expected (value, old value) or None when the node has no old value)
WALKS = [
    pytest.param([], (NEW, OLD), id="root"),
    pytest.param(["name"], ("n2", "n"), id="property"),
    pytest.param(["labels", "app"], ("web", "web"), id="additional_properties_entry"),
    pytest.param(["labels", "env"], None, id="map_entry_added"),
    pytest.param(["labels", "tier"], None, id="map_entry_removed_is_not_reachable"),
    pytest.param(["extra"], None, id="unknown_field_has_no_schema"),
    pytest.param(["ports", 0], (NEW["ports"][0], OLD["ports"][1]), id="map_list_item_by_both_keys"),
    pytest.param(["ports", 0, "port"], (81, 81), id="map_list_item_property"),
    pytest.param(["ports", 1], None, id="map_list_item_with_new_key"),
    pytest.param(["ports", 2], None, id="index_out_of_range"),
    pytest.param(["ports", -1], None, id="negative_index"),
    pytest.param(["containers", 0, "ports", 0, "port"], (8081, 8080), id="map_list_in_map_list"),
    pytest.param(["containers", 0, "args"], (["a", "b"], ["a", "b"]), id="atomic_list_under_map_list"),
    pytest.param(["containers", 0, "args", 0], None, id="atomic_list_item"),
    pytest.param(["containers", 1, "name"], None, id="below_uncorrelated_node"),
    pytest.param(["tags", 0], None, id="set_list_item"),
    pytest.param(["args", 0], None, id="unset_list_type_item"),
    pytest.param(["atomic", 0, "name"], None, id="inside_atomic_list_item"),
    pytest.param(["name", "x"], None, id="key_on_scalar"),
    pytest.param(["labels", 0], None, id="index_on_map"),
]


def _walk(node: CorrelatedObject | None, path: list[str | int]) -> CorrelatedObject | None:
    for step in path:
        if node is not None:
            node = node.key(step) if isinstance(step, str) else node.index(step)
    return node


@pytest.mark.parametrize(("path", "expected"), WALKS)
def test_walk(path: list[str | int], expected: tuple[Any, Any] | None) -> None:
    node = _walk(CorrelatedObject(NEW, OLD, SCHEMA), path)
    assert (None if node is None else (node.value, node.old_value)) == expected


def test_no_schema_correlates_nothing() -> None:
    node = CorrelatedObject({"a": 1}, {"a": 1}, None)
    assert node.key("a") is None
    assert node.cached_deep_equal() is False


def _equal(schema: dict[str, Any], new: Any, old: Any) -> bool:
    return CorrelatedObject(new, old, Schema.from_json(schema)).cached_deep_equal()


OBJECT = {"type": "object", "properties": {"a": {"type": "integer"}, "b": STRING}}
KEYED = _map_list(["k"], {"k": STRING, "v": {"type": "integer"}})
SET = {"type": "array", "items": STRING, "x-kubernetes-list-type": "set"}

# (schema, new, old, cached_deep_equal())
EQUALITY = [
    pytest.param(OBJECT, {"a": 1, "b": "x"}, {"b": "x", "a": 1}, True, id="equal_objects"),
    pytest.param(OBJECT, {"a": 1}, {"a": 1.0}, False, id="int_vs_float_leaf"),
    pytest.param(OBJECT, {"a": 1}, {"a": 1, "b": "x"}, False, id="key_removed"),
    pytest.param(OBJECT, {"a": 1, "b": "x"}, {"a": 1, "c": "x"}, False, id="key_renamed"),
    pytest.param(OBJECT, {"a": None}, {"a": None}, True, id="null_leaves"),
    pytest.param(OBJECT, None, None, True, id="both_null"),
    pytest.param(OBJECT, {}, None, False, id="null_vs_empty"),
    pytest.param(OBJECT, {"a": 1}, [1], False, id="map_vs_list"),
    # A field without a schema is never correlated, so equal objects with unknown fields count as changed.
    pytest.param(OBJECT, {"z": 1}, {"z": 1}, False, id="unknown_field_equal_but_uncorrelated"),
    pytest.param(KEYED, [{"k": "a", "v": 1}, {"k": "b", "v": 2}], [{"k": "b", "v": 2}, {"k": "a", "v": 1}], True,
                 id="map_list_reordered"),
    pytest.param(KEYED, [{"k": "a", "v": 1}], [{"k": "a", "v": 2}], False, id="map_list_value_changed"),
    pytest.param(KEYED, [{"k": "a", "v": 1}], [{"k": "b", "v": 1}], False, id="map_list_key_changed"),
    pytest.param(KEYED, [{"k": "a"}], [{"k": "a"}, {"k": "b"}], False, id="map_list_item_removed"),
    # Each new item is compared with the *first* old item of its key, so duplicates in old go unseen.
    pytest.param(KEYED, [{"k": "a", "v": 1}, {"k": "a", "v": 1}], [{"k": "a", "v": 1}, {"k": "a", "v": 2}], True,
                 id="map_list_duplicate_keys_first_wins"),
    pytest.param(KEYED, [], [], True, id="empty_map_lists"),
    # Without `type: array` upstream's map list finds nothing, yet the list is correlatable: never equal.
    pytest.param(KEYED | {"type": ""}, [{"k": "a"}], [{"k": "a"}], False, id="map_list_without_array_type"),
    pytest.param(SET, ["x", "y"], ["x", "y"], True, id="set_list_compared_whole"),
    pytest.param(SET, ["x", "y"], ["y", "x"], False, id="set_list_reordered_is_a_change"),
    pytest.param(ATOMIC_STRINGS, ["x"], ["x"], True, id="atomic_list_equal"),
    pytest.param(ATOMIC_STRINGS, ["x", "y"], ["y", "x"], False, id="atomic_list_reordered"),
    pytest.param({"type": "array"}, [1], [1], True, id="atomic_list_without_items_schema"),
    pytest.param(KEYED | {"items": None}, [{"k": "a"}], [{"k": "a"}], False, id="map_list_without_items_schema"),
]  # fmt: skip


@pytest.mark.parametrize(("schema", "new", "old", "expected"), EQUALITY)
def test_cached_deep_equal(schema: dict[str, Any], new: Any, old: Any, expected: bool) -> None:
    assert _equal(schema, new, old) is expected


def test_children_are_kept() -> None:
    node = CorrelatedObject(NEW, OLD, SCHEMA)
    assert node.key("ports") is node.key("ports")
    ports = node.key("ports")
    assert ports is not None and ports.index(0) is ports.index(0)


def test_result_is_cached() -> None:
    new = ["x"]
    node = CorrelatedObject(new, ["x"], Schema.from_json(ATOMIC_STRINGS))
    assert node.cached_deep_equal() is True
    new[0] = "y"  # data never changes during a validation; this only shows the answer is not recomputed
    assert node.cached_deep_equal() is True


def test_parent_reuses_child_results() -> None:
    schema = Schema.from_json({"type": "object", "properties": {"args": ATOMIC_STRINGS}})
    new, old = {"args": ["x"]}, {"args": ["x"]}
    node = CorrelatedObject(new, old, schema)
    args = node.key("args")
    assert args is not None and args.cached_deep_equal() is True
    new["args"][0] = "y"  # the parent takes the child's remembered answer instead of comparing again
    assert node.cached_deep_equal() is True
    assert CorrelatedObject(new, old, schema).cached_deep_equal() is False
