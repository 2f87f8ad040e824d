"""Map-list keys and lookups: first entry wins, unusable keys are skipped, and Go's key types stay apart."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kcel.k8s.schemas.maplist import MapListIndex, item_key, lookup_key
from kcel.k8s.schemas.schema import Schema

ONE_KEY = Schema.from_json({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"]})
TWO_KEYS = Schema.from_json(
    {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "port"]}
)

# (schema, items, query, expected result)
LOOKUPS = [
    pytest.param(ONE_KEY, [{"k": "a", "v": 1}, {"k": "b", "v": 2}], {"k": "b"}, {"k": "b", "v": 2}, id="single_key"),
    pytest.param(ONE_KEY, [{"k": "a", "v": 1}, {"k": "a", "v": 2}], {"k": "a"}, {"k": "a", "v": 1}, id="first_wins"),
    pytest.param(ONE_KEY, [{"v": 1}, {"k": None, "v": 2}, {"k": "a", "v": 3}], {"k": "a"}, {"k": "a", "v": 3},
                 id="missing_and_null_keys_skipped"),
    pytest.param(ONE_KEY, [{"v": 1}], {}, None, id="query_missing_key_finds_nothing"),
    pytest.param(ONE_KEY, [{"k": None}], {"k": None}, None, id="null_key_never_matches"),
    pytest.param(ONE_KEY, [{"k": ["a"]}, {"k": {"x": 1}}], {"k": ["a"]}, None, id="non_scalar_keys_ignored"),
    pytest.param(ONE_KEY, [5, "a", None, {"k": "a"}], {"k": "a"}, {"k": "a"}, id="non_object_items_skipped"),
    pytest.param(ONE_KEY, [{"k": "a"}], "a", None, id="non_object_query"),
    pytest.param(ONE_KEY, [{"k": 1, "v": "int"}, {"k": True, "v": "bool"}], {"k": True}, {"k": True, "v": "bool"},
                 id="bool_is_not_int"),
    pytest.param(ONE_KEY, [{"k": 1}], {"k": 1.0}, None, id="float_is_not_int"),
    pytest.param(ONE_KEY, [{"k": 0.1234561}], {"k": 0.1234564}, None, id="single_float_key_exact"),
    pytest.param(TWO_KEYS, [{"name": "a", "port": 1}, {"name": "a", "port": 2}], {"port": 2, "name": "a"},
                 {"name": "a", "port": 2}, id="multi_key"),
    pytest.param(TWO_KEYS, [{"name": "a", "port": 1}], {"name": "a"}, None, id="multi_key_needs_every_key"),
    pytest.param(TWO_KEYS, [{"name": "a"}, {"name": "a", "port": 1}], {"name": "a", "port": 1},
                 {"name": "a", "port": 1}, id="multi_key_item_missing_one_key_skipped"),
    pytest.param(TWO_KEYS, [{"name": "a", "port": 2}], {"name": "a", "port": 2.0}, None, id="multi_key_int_vs_float"),
    pytest.param(TWO_KEYS, [{"name": "a", "port": "1"}], {"name": "a", "port": 1}, None, id="multi_key_str_vs_int"),
    # Upstream joins the `%f` texts of multi-key floats, so floats equal to 6 decimals share a key.
    pytest.param(TWO_KEYS, [{"name": "a", "port": 0.1234561}], {"name": "a", "port": 0.1234564},
                 {"name": "a", "port": 0.1234561}, id="multi_key_floats_to_6_decimals"),
    pytest.param(TWO_KEYS, [{"name": "a", "port": -0.0}], {"name": "a", "port": 0.0}, None, id="multi_key_minus_zero"),
    pytest.param(ONE_KEY, [{"k": -0.0}], {"k": 0.0}, {"k": -0.0}, id="single_key_minus_zero_is_zero"),
    pytest.param(Schema(list_type="map", list_map_keys=("k",)), [{"k": "a"}], {"k": "a"}, None, id="no_array_type"),
    pytest.param(Schema(type="array", list_type="set", list_map_keys=("k",)), [{"k": "a"}], {"k": "a"}, None,
                 id="set_list"),
    pytest.param(Schema(type="array", list_type="map"), [{"k": "a"}], {"k": "a"}, None, id="no_keys"),
    pytest.param(ONE_KEY, None, {"k": "a"}, None, id="no_items"),
]  # fmt: skip


@pytest.mark.parametrize(("schema", "items", "query", "expected"), LOOKUPS)
def test_lookup(schema: Schema, items: list[Any] | None, query: Any, expected: Any) -> None:
    assert MapListIndex(schema, items).get(query) == expected


def test_lookup_returns_the_item_itself() -> None:
    item = {"k": "a"}
    assert MapListIndex(ONE_KEY, [item]).get({"k": "a"}) is item


class CountingItems(list[Any]):
    """A list that counts how often it is iterated, to show the index reads the items once."""

    iterations = 0

    def __iter__(self) -> Iterator[Any]:
        self.iterations += 1
        return super().__iter__()


def test_items_are_indexed_once() -> None:
    items = CountingItems({"k": str(i)} for i in range(100))
    index = MapListIndex(ONE_KEY, items)
    assert [index.get({"k": str(i)}) for i in (99, 0, 50, 99)] == [{"k": "99"}, {"k": "0"}, {"k": "50"}, {"k": "99"}]
    assert index.get({"k": "absent"}) is None
    assert items.iterations == 1


KEYS = ("a", "b", "c", "d")
XYZ = {"a": "x", "b": "y", "c": "z"}

# (item, other item, key names, same key?) for the runtime key of `==` and `+`.
ITEM_KEYS = [
    pytest.param({}, {"a": None}, ("a",), True, id="missing_is_null"),
    pytest.param({"a": 1}, {"a": 1.0}, ("a",), False, id="int_vs_float"),
    pytest.param({"a": 1}, {"a": True}, ("a",), False, id="int_vs_bool"),
    pytest.param({"a": 0}, {"a": False}, ("a",), False, id="zero_vs_false"),
    pytest.param({"a": "1"}, {"a": 1}, ("a",), False, id="str_vs_int"),
    pytest.param({"a": 1, "b": 2}, {"a": 2, "b": 1}, ("a", "b"), False, id="key_order_follows_names"),
    pytest.param({"a": 1, "b": 2, "x": 1}, {"b": 2, "a": 1, "x": 2}, ("a", "b"), True, id="other_fields_ignored"),
    pytest.param({"a": {"x": 1, "y": 2}}, {"a": {"y": 2, "x": 1}}, ("a",), True, id="map_value_order_free"),
    pytest.param({"a": [1, 2]}, {"a": [2, 1]}, ("a",), False, id="list_value_ordered"),
    # More than 3 keys: Go's `%#v` text is the key, and it prints 2.0 as `2` but 1e6 as `1e+06`.
    pytest.param(XYZ | {"d": 2}, XYZ | {"d": 2.0}, KEYS, True, id="four_keys_integral_float_is_int"),
    pytest.param(XYZ | {"d": 2}, XYZ | {"d": 2.5}, KEYS, False, id="four_keys_fraction_differs"),
    pytest.param({"a": 10**6}, {"a": 1e6}, KEYS, False, id="four_keys_large_float_differs"),
    pytest.param({"a": 0}, {"a": -0.0}, KEYS, False, id="four_keys_minus_zero_differs"),
    pytest.param({"a": 0.0}, {"a": -0.0}, KEYS, False, id="four_keys_minus_zero_vs_zero"),
    pytest.param({"a": 2.5}, {"a": 2.5}, KEYS, True, id="four_keys_same_float"),
    pytest.param({"a": True}, {"a": 1}, KEYS, False, id="four_keys_bool_vs_int"),
]  # fmt: skip


@pytest.mark.parametrize(("item", "other", "names", "same"), ITEM_KEYS)
def test_item_key(item: dict[str, Any], other: dict[str, Any], names: tuple[str, ...], same: bool) -> None:
    key, other_key = item_key(item, names), item_key(other, names)
    assert (key == other_key) is same
    assert len({key, other_key}) == (1 if same else 2)  # usable as dict keys


@pytest.mark.parametrize(
    ("item", "keys", "usable"),
    [
        ({"k": "a"}, ("k",), True),
        ({"k": 1.5}, ("k",), True),
        ({"k": False}, ("k",), True),
        ({}, ("k",), False),
        ({"k": None}, ("k",), False),
        ({"k": [1]}, ("k",), False),
        ({"k": {}}, ("k",), False),
        (["k"], ("k",), False),
        ({"a": "x", "b": None}, ("a", "b"), False),
    ],
)
def test_lookup_key_usable(item: Any, keys: tuple[str, ...], usable: bool) -> None:
    assert (lookup_key(item, keys) is not None) is usable
